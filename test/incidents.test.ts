import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  groupedAlert,
  nodesIn,
  outage,
  report,
  startEngineApp,
  subOrg,
  type EngineApp,
} from './support/incident-engine.js';

// The incident engine end to end on the real service and database (both), on a moved clock: a storm is
// one first message and one update; recoveries are told once; the resolve is prompt; flaps are counted.
let engine: EngineApp;
const S = 1_000;

beforeAll(async () => {
  engine = await startEngineApp();
});
afterAll(async () => {
  await engine.t.close();
});

describe('a storm of 200 nodes in one organization', () => {
  it('sends one first message at once, one update at the end of group_wait, and one prompt resolve', async () => {
    const org = await subOrg(engine, 'Storm site');
    const nodes = await nodesIn(engine, org, 'storm', 200);
    const alertId = await groupedAlert(engine, { group_wait: 10, group_interval: 300 });

    expect(await outage(engine)).toBe(200);
    const [incident] = await engine.incidentsOf(alertId);
    expect(incident).toMatchObject({ status: 'firing', firing: 200, sequence: 1 });
    let messages = await engine.messages(incident!.id);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.incident).toMatchObject({ sequence: 1, reason: 'opened', status: 'firing' });
    expect(messages[0]!.members).toHaveLength(1);
    expect(messages[0]!.counts).toMatchObject({ firing: 1, new: 1 });

    // Every notification joined the incident.
    const grouped = await engine.t.ctx.db
      .selectFrom('notifications')
      .select(['status', 'incident_id'])
      .where('alert_id', '=', alertId)
      .where('incident_sequence', 'is', null)
      .execute();
    expect(grouped).toHaveLength(200);
    expect(grouped.every((row) => row.status === 'grouped' && row.incident_id === incident!.id)).toBe(true);

    // Nothing before group_wait is over; one update at its end.
    engine.at.now += 9 * S;
    await engine.flushDue();
    expect(await engine.messages(incident!.id)).toHaveLength(1);
    engine.at.now += 1 * S;
    await engine.flushDue();
    messages = await engine.messages(incident!.id);
    expect(messages).toHaveLength(2);
    const update = messages[1]!;
    expect(update.incident).toMatchObject({ sequence: 2, reason: 'updated', members_omitted: 100 });
    expect(update.incident.members_url).toBe(`http://edgewatch.test/api/v2/incident/${incident!.id}/members`);
    expect(update.counts).toMatchObject({
      firing: 200,
      new: 199,
      recovered: 0,
      by_condition: { UNREACHABLE: 200 },
    });
    expect(update.members).toHaveLength(100);
    expect(update.members.every((member) => member.change === 'new')).toBe(true);
    expect(update.message).toBe('Storm site: 200 UNREACHABLE (+199 new).');

    // Nothing changed: nothing more, even much later (the repeat is hours away).
    engine.at.now += 600 * S;
    await engine.flushDue();
    expect(await engine.messages(incident!.id)).toHaveLength(2);

    // Partial recovery: told once, at the next group_interval.
    for (const node of nodes.slice(0, 50)) await report(engine, node.token);
    await engine.flushDue();
    messages = await engine.messages(incident!.id);
    expect(messages).toHaveLength(3);
    expect(messages[2]!.counts).toMatchObject({ firing: 150, new: 0, recovered: 50 });
    expect(messages[2]!.members.slice(0, 50).every((member) => member.change === 'recovered')).toBe(true);
    expect(messages[2]!.members[0]).toMatchObject({ current_state: 'ALIVE', previous_state: 'UNREACHABLE' });

    // The rest recover: the resolve goes out group_wait after the last, not group_interval.
    engine.at.now += 1 * S;
    for (const node of nodes.slice(50)) await report(engine, node.token);
    engine.at.now += 10 * S;
    await engine.flushDue();
    messages = await engine.messages(incident!.id);
    expect(messages).toHaveLength(4);
    expect(messages[3]!.incident).toMatchObject({ sequence: 4, reason: 'resolved', status: 'resolved' });
    expect((await engine.incidentsOf(alertId))[0]).toMatchObject({ status: 'resolved', due_at: null });

    // The next outage is a new incident.
    expect(await outage(engine)).toBe(200);
    expect(await engine.incidentsOf(alertId)).toHaveLength(2);
  });
});

describe('grouping keys', () => {
  it('makes one incident per organization', async () => {
    const north = await subOrg(engine, 'North');
    const south = await subOrg(engine, 'South');
    await nodesIn(engine, north, 'north', 3);
    await nodesIn(engine, south, 'south', 2);
    const alertId = await groupedAlert(engine);
    await outage(engine);
    const incidents = await engine.incidentsOf(alertId);
    const byOrg = new Map(incidents.map((incident) => [incident.org_id, incident]));
    expect(byOrg.get(north)).toMatchObject({ firing: 3, status: 'firing' });
    expect(byOrg.get(south)).toMatchObject({ firing: 2, status: 'firing' });
  });
});
