import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction.js';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { flushIncident } from '../src/features/incidents/flush.js';
import { changeIncident } from '../src/features/incidents/join.js';
import { findAlert, type EventRow } from '../src/features/notifications/repo.js';
import { lockWaiters } from './support/locks.js';
import {
  groupedAlert,
  nodesIn,
  report,
  startEngineApp,
  subOrg,
  type EngineApp,
} from './support/incident-engine.js';

// The races of "nothing lost, nothing doubled" (docs/decisions/0008-incidents.md), each forced: the test
// holds one side between its read and its write while the other runs. On PostgreSQL the other side waits
// at the incident's row; SQLite's one writer serializes them. Each fails without the lock it checks.
let engine: EngineApp;
const S = 1_000;

beforeAll(async () => {
  engine = await startEngineApp();
});
afterAll(async () => {
  await engine.t.close();
});

/** A flush of the incident held after its read until released. */
function heldFlush(incidentId: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const reading = new Promise<void>((resolve) => (reached = resolve));
  const done = flushIncident(engine.t.ctx, incidentId, {
    afterRead: async () => {
      reached();
      await released;
    },
  });
  return { reading, release, done };
}

/** Moves the clock past the heartbeat timeout: nodes that did not report since are silent. */
function pastTimeout(): void {
  engine.at.now += engine.t.config.nodeHeartbeatTimeoutS * 1_000 + 60_000;
}

describe('a flush and the events of its incident', () => {
  it('puts a member that joins during a flush in the next message', async () => {
    const org = await subOrg(engine, 'Join race');
    await nodesIn(engine, org, 'join', 2);
    const alertId = await groupedAlert(engine, { group_wait: 10, group_interval: 300 });
    pastTimeout();
    // Registered now: it reports, and is silent only after the next timeout.
    await nodesIn(engine, org, 'late', 1);
    expect(await sweepSilentNodes(engine.t.ctx, 0)).toBeGreaterThanOrEqual(2);
    const [incident] = await engine.incidentsOf(alertId);
    expect(incident).toMatchObject({ firing: 2 });

    engine.at.now += 10 * S;
    const flush = heldFlush(incident!.id);
    await flush.reading;
    // The late node goes silent while the flush holds what it read.
    pastTimeout();
    const joining = sweepSilentNodes(engine.t.ctx, 0);
    await lockWaiters(engine.t, 1);
    flush.release();
    await flush.done;
    await joining;

    const messages = await engine.messages(incident!.id);
    expect(messages.map((message) => message.incident.reason)).toEqual(['opened', 'updated']);
    expect(messages[1]!.members.map((member) => member.node.name).sort()).toEqual(['join-000', 'join-001']);
    expect(messages[1]!.counts.firing).toBe(2);

    // Not in the flush that had read before it joined: in the next message, one group_interval on.
    engine.at.now += 300 * S;
    await engine.flushDue();
    const next = (await engine.messages(incident!.id))[2];
    expect(next?.incident.reason).toBe('updated');
    expect(next!.members.find((member) => member.node.name === 'late-000')?.change).toBe('new');
  });

  it('never sends a resolve after a member fired again: the firing opens a new incident', async () => {
    const org = await subOrg(engine, 'Resolve race');
    const [node] = await nodesIn(engine, org, 'refire', 1);
    const alertId = await groupedAlert(engine, { group_wait: 10, group_interval: 300 });
    pastTimeout();
    await sweepSilentNodes(engine.t.ctx, 0);
    const [incident] = await engine.incidentsOf(alertId);
    await report(engine, node!.token);
    engine.at.now += 10 * S;

    // The flush has read "all recovered" and is about to resolve; the node goes silent again meanwhile.
    const flush = heldFlush(incident!.id);
    await flush.reading;
    pastTimeout();
    const refiring = sweepSilentNodes(engine.t.ctx, 0);
    await lockWaiters(engine.t, 1);
    flush.release();
    await flush.done;
    await refiring;

    const incidents = await engine.incidentsOf(alertId);
    expect(incidents.map((row) => row.status)).toEqual(['resolved', 'firing']);
    const [resolved, reopened] = incidents;
    expect(resolved!.firing).toBe(0);
    expect((await engine.messages(resolved!.id)).at(-1)?.incident.reason).toBe('resolved');
    expect(reopened).toMatchObject({ firing: 1 });
    expect((await engine.messages(reopened!.id)).map((message) => message.incident.reason)).toEqual([
      'opened',
    ]);
  });
});

describe('two events that open the same incident at once', () => {
  it('opens one incident; the second event joins it', async () => {
    const org = await subOrg(engine, 'Open race');
    const nodes = await nodesIn(engine, org, 'open', 2);
    const alertId = await groupedAlert(engine, { group_wait: 10 });
    const alert = (await findAlert(engine.t.ctx.db, alertId))!;
    const event = (nodeId: string, id: string): EventRow => ({
      id,
      type: 'NODE_STATE_CHANGE',
      condition: 'UNREACHABLE',
      org_id: org,
      node_id: nodeId,
      resource_kind: 'node',
      resource_id: nodeId,
      resource_name: nodeId,
      previous_state: 'ALIVE',
      current_state: 'UNREACHABLE',
      sequence: 2,
      occurred_at: engine.at.now,
      detected_at: engine.at.now,
    });
    // The first opens the incident and holds its transaction open.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let opened!: () => void;
    const opening = new Promise<void>((resolve) => (opened = resolve));
    const first = transaction(engine.t.ctx.db, async (trx) => {
      const one = event(nodes[0]!.id, 'race-event-1');
      await changeIncident(engine.t.ctx, trx, alert, one, { id: 'race-n-1', condition: 'UNREACHABLE' });
      opened();
      await released;
    });
    await opening;
    const second = transaction(engine.t.ctx.db, (trx) =>
      changeIncident(engine.t.ctx, trx, alert, event(nodes[1]!.id, 'race-event-2'), {
        id: 'race-n-2',
        condition: 'UNREACHABLE',
      }),
    );
    await lockWaiters(engine.t, 1);
    release();
    await first;
    expect(await second).toBe(true);

    const incidents = await engine.incidentsOf(alertId);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({ firing: 2 });
    expect(await engine.messages(incidents[0]!.id)).toHaveLength(1);
  });
});
