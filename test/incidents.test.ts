import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { pruneNotifications } from '../src/features/notifications/repo.js';
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
    // The e-mail storm is two e-mails, not two hundred: each message is one e-mail through the outbox.
    const mails = await engine.t.ctx.db
      .selectFrom('email_outbox')
      .select('subject')
      .where('subject', 'like', 'Storm site:%')
      .orderBy('created_at')
      .execute();
    expect(mails.map((mail) => mail.subject)).toEqual([
      'Storm site: 1 node UNREACHABLE (+1)',
      'Storm site: 200 nodes UNREACHABLE (+199)',
    ]);

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

describe('flaps, folds, batches and windows', () => {
  it('counts a member that recovers and fires again within group_interval as a flap, which sends nothing alone', async () => {
    const org = await subOrg(engine, 'Flappy');
    const [flapper, , returning] = await nodesIn(engine, org, 'flap', 3);
    const alertId = await groupedAlert(engine, { group_wait: 10, group_interval: 300 });
    await outage(engine);
    const incident = (await engine.incidentsOf(alertId)).find((row) => row.org_id === org);
    engine.at.now += 10 * S;
    await engine.flushDue();
    expect(await engine.messages(incident!.id)).toHaveLength(2);

    // Back, and silent again within group_interval: a flap, and no message for it.
    await report(engine, flapper!.token);
    await outage(engine);
    await engine.flushDue();
    expect(await engine.messages(incident!.id)).toHaveLength(2);
    expect((await engine.incidentsOf(alertId)).find((row) => row.id === incident!.id)).toMatchObject({
      flaps: 1,
      firing: 3,
    });

    // The next real change is told, with the flap counted, not listed as new.
    await report(engine, returning!.token);
    engine.at.now += 300 * S;
    await engine.flushDue();
    const messages = await engine.messages(incident!.id);
    expect(messages).toHaveLength(3);
    expect(messages[2]!.counts).toMatchObject({ firing: 2, new: 0, recovered: 1, flaps: 1 });
    // The recovered first, then those firing by how long they have been: the flapper fired again last.
    expect(messages[2]!.members.map((member) => [member.node.name, member.change])).toEqual([
      ['flap-002', 'recovered'],
      ['flap-001', 'firing'],
      ['flap-000', 'firing'],
    ]);
  });

  it('folds tunnel changes behind an UNREACHABLE node into the firing incident: counted, not listed', async () => {
    const org = await subOrg(engine, 'Spokes');
    const [hub] = await nodesIn(engine, org, 'hub', 1);
    const tunnel = (state: string) => ({
      tunnels: [{ key: 'to-hub', name: 'To the hub', state, peer_node_id: hub!.id }],
    });
    const spokes = await nodesIn(engine, org, 'spoke', 4);
    for (const spoke of spokes) await report(engine, spoke.token, tunnel('CONNECTED'));
    const alertId = await groupedAlert(engine, { alert_me: 'TERMINATED' }, 'TUNNEL_STATE_CHANGE');

    // One tunnel goes down on its own: the incident opens with it.
    await report(engine, spokes[0]!.token, tunnel('TERMINATED'));
    const [incident] = await engine.incidentsOf(alertId);
    expect(incident).toMatchObject({ firing: 1, behind_unreachable: 0 });

    // The hub goes silent; the other spokes' tunnels to it go down: folded into the incident.
    engine.at.now += engine.t.config.nodeHeartbeatTimeoutS * 1_000 + 60_000;
    for (const spoke of spokes)
      await report(engine, spoke.token, tunnel(spoke === spokes[0] ? 'TERMINATED' : 'CONNECTED'));
    await sweepSilentNodes(engine.t.ctx, 0);
    for (const spoke of spokes.slice(1)) await report(engine, spoke.token, tunnel('TERMINATED'));
    expect((await engine.incidentsOf(alertId))[0]).toMatchObject({ firing: 1, behind_unreachable: 3 });
    const folded = await engine.t.ctx.db
      .selectFrom('notifications')
      .select(['status', 'reason', 'incident_id'])
      .where('alert_id', '=', alertId)
      .where('incident_sequence', 'is', null)
      .where('node_id', '!=', spokes[0]!.id)
      .execute();
    expect(folded).toEqual(
      Array.from({ length: 3 }, () => ({
        status: 'grouped',
        reason: 'node_unreachable',
        incident_id: incident!.id,
      })),
    );

    // The first tunnel recovers: the resolve counts the folded ones and lists only the member.
    await report(engine, spokes[0]!.token, tunnel('CONNECTED'));
    engine.at.now += 10 * S;
    await engine.flushDue();
    const last = (await engine.messages(incident!.id)).at(-1)!;
    expect(last.incident.reason).toBe('resolved');
    expect(last.counts.behind_unreachable).toBe(3);
    expect(last.members.map((member) => member.node.name)).toEqual(['spoke-000']);
  });

  it('batches the events of a type without a good state, and ends the batch silently after a quiet group_interval', async () => {
    const org = await subOrg(engine, 'Upgrades');
    const nodes = await nodesIn(engine, org, 'upg', 3);
    for (const node of nodes) await report(engine, node.token, { upgrade: { status: 'ENABLED' } });
    const alertId = await groupedAlert(
      engine,
      { group_wait: 10, group_interval: 60, alert_me: 'FAILED' },
      'NODE_UPGRADE',
    );
    for (const node of nodes) await report(engine, node.token, { upgrade: { status: 'FAILED' } });
    const [incident] = await engine.incidentsOf(alertId);
    expect(incident).toMatchObject({ firing: 3 });
    engine.at.now += 10 * S;
    await engine.flushDue();
    const messages = await engine.messages(incident!.id);
    expect(messages.map((message) => [message.incident.reason, message.counts.firing])).toEqual([
      ['opened', 1],
      ['updated', 3],
    ]);
    engine.at.now += 60 * S;
    await engine.flushDue();
    expect((await engine.incidentsOf(alertId))[0]).toMatchObject({ status: 'resolved' });
    expect(await engine.messages(incident!.id)).toHaveLength(2);
  });

  it('keeps a node in a maintenance window out, and lets it join at the window’s end', async () => {
    const org = await subOrg(engine, 'Maintained');
    const [kept, free] = await nodesIn(engine, org, 'maint', 2);
    const alertId = await groupedAlert(engine, { group_wait: 10, group_interval: 60 });
    const window = await engine.t.request('POST', '/api/v1/silence', {
      body: {
        name: 'Rack',
        org_id: org,
        node_id: kept!.id,
        starts_at: new Date(engine.at.now).toISOString(),
        ends_at: new Date(engine.at.now + 3_600_000).toISOString(),
      },
    });
    expect(window.status, window.text).toBe(201);
    await outage(engine);
    // Other organizations' nodes went down too: this organization's incident.
    const incident = (await engine.incidentsOf(alertId)).find((row) => row.org_id === org);
    expect(incident).toMatchObject({ firing: 1 });
    const held = await engine.t.ctx.db
      .selectFrom('notifications')
      .select(['status', 'reason'])
      .where('alert_id', '=', alertId)
      .where('node_id', '=', kept!.id)
      .executeTakeFirstOrThrow();
    expect(held).toEqual({ status: 'suppressed', reason: 'maintenance' });

    // The window ends with the node still down: it joins the incident, told in the next update.
    engine.at.now += 3_600_000;
    await engine.flushDue();
    await engine.flushDue();
    const messages = await engine.messages(incident!.id);
    const joined = messages.at(-1)!;
    expect(joined.members.find((member) => member.node.name === 'maint-000')?.change).toBe('new');
    expect(joined.counts.firing).toBe(2);
    expect(free).toBeDefined();
  });
});

describe('retention', () => {
  it('removes resolved incidents past the horizon with their members, and keeps every firing one', async () => {
    const before = await engine.t.ctx.db.selectFrom('incidents').select(['id', 'status']).execute();
    expect(before.some((row) => row.status === 'resolved')).toBe(true);
    expect(before.some((row) => row.status === 'firing')).toBe(true);
    await pruneNotifications(engine.t.ctx.db, engine.at.now + 1);
    const after = await engine.t.ctx.db.selectFrom('incidents').select(['id', 'status']).execute();
    expect(after.map((row) => row.id).sort()).toEqual(
      before
        .filter((row) => row.status === 'firing')
        .map((row) => row.id)
        .sort(),
    );
    const orphans = await engine.t.ctx.db
      .selectFrom('incident_members')
      .select('incident_id')
      .where(
        'incident_id',
        'not in',
        after.map((row) => row.id),
      )
      .execute();
    expect(orphans).toEqual([]);
  });
});
