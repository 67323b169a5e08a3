import { Type } from 'typebox';

export const RoleRef = Type.Object({ id: Type.String(), name: Type.String() });

export const OrgRef = Type.Object({ id: Type.String(), name: Type.String() });

/** Who a user is, as both the caller's own answer (/me) and the user directory show it. */
export const identityFields = {
  id: Type.String(),
  name: Type.String(),
  email: Type.String(),
  username: Type.String({ description: 'The e-mail address: the name the user logs in with.' }),
  org_id: Type.String(),
  roles: Type.Array(RoleRef),
};
