import { useOrgs } from '../api/hooks';

/** The organizations the caller sees, as options of a select. */
export function OrgOptions() {
  const orgs = useOrgs();
  return (
    <>
      {orgs.data?.results.map((org) => (
        <option key={org.id} value={org.id}>
          {org.name}
        </option>
      ))}
    </>
  );
}
