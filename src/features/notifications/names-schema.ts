import { Type } from 'typebox';

/** How the names of a notification's context are chosen (notifications/names.ts), for the descriptions. */
export const CURRENT_NAMES =
  'Names are the current ones; a node, tunnel or service that is gone keeps the name it had when the ' +
  'notification was made (the one in its body).';

export const Named = Type.Object({ id: Type.String(), name: Type.String() });

/** The tunnel or service a notification is about; null when it is about the node itself. */
export const NamedResource = Type.Union(
  [
    Type.Object({
      kind: Type.Union([Type.Literal('tunnel'), Type.Literal('service')]),
      id: Type.String(),
      name: Type.String(),
    }),
    Type.Null(),
  ],
  {
    description: `The tunnel or service it is about; null when it is about the node itself. ${CURRENT_NAMES}`,
  },
);
