import type { IncidentFacts, MemberFacts } from '../../src/features/incidents/message-body.js';

/** An incident of the Paris organization at T0, as the message tests build their bodies from. */
export const INCIDENT_T0 = Date.UTC(2026, 10, 28, 9, 0, 0);

export const INCIDENT_FACTS: IncidentFacts = {
  id: 'incident-1',
  sequence: 2,
  status: 'firing',
  reason: 'updated',
  openedAt: INCIDENT_T0,
  resolvedAt: null,
  alert: { id: 'alert-1', name: 'Paris down' },
  organization: { id: 'org-paris', name: 'Acme Paris' },
  behindUnreachable: 0,
  flaps: 0,
  membersUrl: 'https://edgewatch.example/api/v2/incident/incident-1/members',
};

/** Node `i` of the incident, UNREACHABLE (ALIVE again when recovered), since `i` ms after T0. */
export function nodeMember(
  i: number,
  change: MemberFacts['change'],
  name = `paris-${String(i).padStart(4, '0')}`,
): MemberFacts {
  const recovered = change === 'recovered';
  return {
    resource: { kind: 'node', id: `node-${i}`, name },
    node: { id: `node-${i}`, name },
    organization: INCIDENT_FACTS.organization,
    condition: 'UNREACHABLE',
    previous_state: recovered ? 'UNREACHABLE' : 'ALIVE',
    current_state: recovered ? 'ALIVE' : 'UNREACHABLE',
    since: new Date(INCIDENT_T0 + i * 1_000).toISOString(),
    change,
  };
}
