import { describe, expect, it } from 'vitest';
import { INCIDENT_FACTS, INCIDENT_T0, nodeMember } from './support/incidents.js';
import { renderChannelRequest } from '../src/features/channels/render.js';
import {
  INCIDENT_RENDERERS,
  incidentHeadline,
  NAMED_MEMBERS,
  PAGERDUTY_MEMBERS,
} from '../src/features/incidents/channel-messages.js';
import { incidentBody, type MemberFacts } from '../src/features/incidents/message-body.js';

// An incident's message on Slack, Teams and PagerDuty (docs/decisions/0008-incidents.md): a headline, up to
// 20 names and "and N more", a line for the recovered, within each vendor's limits.
const T0 = INCIDENT_T0;
const LINKS = {
  console: 'https://edgewatch.example/#/incidents/incident-1',
  pagerDutyEvents: 'https://events.pagerduty.example/v2/enqueue',
};
const FACTS = INCIDENT_FACTS;

const node = nodeMember;

/** 500 nodes down, 488 of them new since the last message, 3 recovered. */
function outage(name?: (i: number) => string): MemberFacts[] {
  return [
    ...Array.from({ length: 488 }, (_, i) => node(i, 'new', name?.(i))),
    ...Array.from({ length: 12 }, (_, i) => node(1_000 + i, 'firing', name?.(1_000 + i))),
    ...Array.from({ length: 3 }, (_, i) => node(2_000 + i, 'recovered', name?.(2_000 + i))),
  ];
}

const request = (type: 'slack' | 'msteams' | 'pagerduty', members: MemberFacts[], facts = FACTS) =>
  renderChannelRequest(
    INCIDENT_RENDERERS,
    type,
    'https://hooks.example/target',
    incidentBody(facts, members),
    LINKS,
  );

describe('the headline', () => {
  it('says where, how many, what, and how many are new', () => {
    expect(incidentHeadline(incidentBody(FACTS, outage()))).toBe('Acme Paris: 500 nodes UNREACHABLE (+488)');
    expect(incidentHeadline(incidentBody(FACTS, [node(1, 'firing')]))).toBe('Acme Paris: 1 node UNREACHABLE');
    const resolved = { ...FACTS, status: 'resolved' as const, reason: 'resolved' as const, resolvedAt: T0 };
    expect(incidentHeadline(incidentBody(resolved, [node(1, 'recovered')]))).toBe(
      'Acme Paris: resolved (Paris down)',
    );
  });
});

describe('Slack', () => {
  it('names 20, says how many more, lists the recovered, and links the incident', () => {
    const message = JSON.parse(request('slack', outage()).body);
    const texts = message.blocks
      .filter((block: any) => block.type === 'section')
      .map((block: any) => block.text.text as string);
    const names = texts.find((text: string) => text.startsWith('paris-'))!;
    expect(names.split(', ')).toHaveLength(NAMED_MEMBERS);
    expect(names).toMatch(/ and 480 more$/);
    // The 3 recovered lie beyond the 100 members listed (the 488 new come first): counted, not named.
    expect(texts).toContain('3 recovered');
    const few = JSON.parse(request('slack', [node(1, 'firing'), node(2, 'recovered')]).body);
    expect(JSON.stringify(few)).toContain('1 recovered: paris-0002');
    expect(JSON.stringify(message)).toContain(LINKS.console);
  });

  it('stays within 50 blocks and 3,000 characters a section, whatever the names', () => {
    const message = JSON.parse(
      request(
        'slack',
        outage((i) => `${'ä<&>'.repeat(30)}-${i}`),
      ).body,
    );
    expect(message.blocks.length).toBeLessThanOrEqual(50);
    for (const block of message.blocks) {
      if (block.type === 'section') expect(block.text.text.length).toBeLessThanOrEqual(3_000);
      if (block.type === 'header') expect(block.text.text.length).toBeLessThanOrEqual(150);
    }
    expect(message.text).not.toMatch(/[<>]/);
  });
});

describe('Teams', () => {
  it('sends one Adaptive Card under 28 KB, with the headline and the link', () => {
    const { body } = request(
      'msteams',
      outage((i) => `${'x'.repeat(120)}-${i}`),
    );
    expect(Buffer.byteLength(body)).toBeLessThan(28 * 1_024);
    const card = JSON.parse(body).attachments[0].content;
    expect(card.body[0].text).toBe('Acme Paris: 500 nodes UNREACHABLE (+488)');
    expect(card.actions[0].url).toBe(LINKS.console);
  });
});

describe('PagerDuty', () => {
  it('triggers and updates one incident by its dedup_key, with counts and the first 50 members, under 512 KB', () => {
    const { url, body } = request(
      'pagerduty',
      outage((i) => `${'y'.repeat(128)}-${i}`),
    );
    expect(url).toBe(LINKS.pagerDutyEvents);
    expect(Buffer.byteLength(body)).toBeLessThan(512 * 1_024);
    const event = JSON.parse(body);
    expect(event).toMatchObject({
      routing_key: 'https://hooks.example/target',
      event_action: 'trigger',
      dedup_key: 'edgewatch:incident-1',
      payload: { severity: 'critical', summary: 'Acme Paris: 500 nodes UNREACHABLE (+488)' },
    });
    expect(event.payload.custom_details.members).toHaveLength(PAGERDUTY_MEMBERS);
    expect(event.payload.custom_details.members_omitted).toBe(453);
    expect(event.payload.custom_details.counts.firing).toBe(500);
  });

  it('resolves the same incident once the edgewatch incident is resolved', () => {
    const resolved = { ...FACTS, status: 'resolved' as const, reason: 'resolved' as const, resolvedAt: T0 };
    const event = JSON.parse(request('pagerduty', [node(1, 'recovered')], resolved).body);
    expect(event).toMatchObject({ event_action: 'resolve', dedup_key: 'edgewatch:incident-1' });
  });
});
