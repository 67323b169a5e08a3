import { describe, expect, it } from 'vitest';
import { INCIDENT_FACTS, INCIDENT_T0, nodeMember } from './support/incidents.js';
import { incidentBody, LISTED_MEMBERS } from '../src/features/incidents/message-body.js';

// The webhook body of an incident's message (docs/decisions/0008-incidents.md): counts, changed members
// first, at most 100 listed, and a sentence for a person.
const T0 = INCIDENT_T0;

const FACTS = { ...INCIDENT_FACTS, behindUnreachable: 12, flaps: 1 };

const node = nodeMember;

describe('an incident message to a webhook', () => {
  it('counts what fires, what is new, what recovered, by condition, and says it in a sentence', () => {
    const members = [node(1, 'firing'), node(2, 'new'), node(3, 'new'), node(4, 'recovered')];
    const body = incidentBody(FACTS, members);
    expect(body.type).toBe('INCIDENT');
    expect(body.incident).toEqual({
      id: 'incident-1',
      sequence: 2,
      status: 'firing',
      reason: 'updated',
      opened_at: '2026-11-28T09:00:00.000Z',
      resolved_at: null,
      members_omitted: 0,
      members_url: FACTS.membersUrl,
    });
    expect(body.counts).toEqual({
      firing: 3,
      new: 2,
      recovered: 1,
      flaps: 1,
      behind_unreachable: 12,
      by_condition: { UNREACHABLE: 3 },
    });
    expect(body.members.map((member) => `${member.resource.name}:${member.change}`)).toEqual([
      'paris-0002:new',
      'paris-0003:new',
      'paris-0004:recovered',
      'paris-0001:firing',
    ]);
    expect(body.message).toBe('Acme Paris: 3 UNREACHABLE (+2 new, 1 recovered, 1 flap).');
  });

  it('lists at most 100 members, changed ones first, and counts the rest as omitted', () => {
    const members = [
      ...Array.from({ length: 450 }, (_, i) => node(i, 'firing')),
      ...Array.from({ length: 50 }, (_, i) => node(500 + i, 'new')),
    ];
    const body = incidentBody(FACTS, members);
    expect(body.members).toHaveLength(LISTED_MEMBERS);
    expect(body.incident.members_omitted).toBe(400);
    expect(body.members.slice(0, 50).every((member) => member.change === 'new')).toBe(true);
    expect(body.counts.firing).toBe(500);
    expect(body.message).toBe('Acme Paris: 500 UNREACHABLE (+50 new, 1 flap).');
  });

  it('says a resolve plainly, with its time', () => {
    const body = incidentBody(
      { ...FACTS, status: 'resolved', reason: 'resolved', resolvedAt: T0 + 600_000, flaps: 0 },
      [node(1, 'recovered')],
    );
    expect(body.incident.resolved_at).toBe('2026-11-28T09:10:00.000Z');
    expect(body.counts.firing).toBe(0);
    expect(body.message).toBe('Acme Paris: all recovered; the incident is resolved.');
  });
});
