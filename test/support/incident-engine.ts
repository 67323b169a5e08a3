import { expect } from 'vitest';
import type { IncidentsTable } from '../../src/db/types.js';
import { sweepSilentNodes } from '../../src/features/fleet/liveness/sweep.js';
import { incidentFlushJob, type FlushSeams } from '../../src/features/incidents/flush.js';
import type { IncidentBody } from '../../src/features/incidents/message-body.js';
import { silenceEndJob } from '../../src/features/silences/end-job.js';
import { Worker } from '../../src/jobs/worker.js';
import { startTestApp, type TestApp, type TestAppOptions } from './harness.js';

/**
 * The incident engine on the real service and database, on a clock the test moves: nothing sleeps. The
 * job worker and the delivery dispatcher do not run by themselves; `flushDue` runs the incidents' due
 * flushes as the worker would, and messages are read where they are written (their notifications).
 */
export interface EngineApp {
  t: TestApp;
  /** The clock every part of the service reads. */
  at: { now: number };
  /** Runs the incidents' flushes and the windows' ends due on the clock. */
  flushDue(seams?: FlushSeams): Promise<number>;
  messages(incidentId?: string): Promise<IncidentBody[]>;
  /** The alert's incidents, oldest first. */
  incidentsOf(alertId: string): Promise<IncidentsTable[]>;
}

export async function startEngineApp(options: Omit<TestAppOptions, 'background'> = {}): Promise<EngineApp> {
  const t = await startTestApp({ ...options, background: false });
  const at = { now: Date.now() };
  t.ctx.clock = { now: () => at.now };
  const flushDue = async (seams: FlushSeams = {}) => {
    const worker = new Worker({
      db: t.ctx.db,
      queue: t.ctx.jobs,
      clock: t.ctx.clock,
      logger: t.ctx.logger,
      // A window's end sends what it held back: into its incident, for a grouped alert.
      handlers: [incidentFlushJob(t.ctx, seams), silenceEndJob(t.ctx)],
      pollMs: 60_000,
      leaseMs: 60_000,
    });
    return worker.runDue();
  };
  const messages = async (incidentId?: string) => {
    let query = t.ctx.db
      .selectFrom('notifications')
      .select(['payload'])
      .where('incident_sequence', 'is not', null)
      .orderBy('created_at')
      .orderBy('incident_sequence');
    if (incidentId !== undefined) query = query.where('incident_id', '=', incidentId);
    const rows = await query.execute();
    return rows.map((row) => JSON.parse(row.payload) as IncidentBody);
  };
  const incidentsOf = (alertId: string) =>
    t.ctx.db
      .selectFrom('incidents')
      .selectAll()
      .where('alert_id', '=', alertId)
      .orderBy('opened_at')
      .orderBy('id')
      .execute();
  return { t, at, flushDue, messages, incidentsOf };
}

/** Registers `count` nodes (named `${prefix}-000`…) in the organization; each reports once: ALIVE. */
export async function nodesIn(
  engine: EngineApp,
  orgId: string,
  prefix: string,
  count: number,
): Promise<{ id: string; token: string }[]> {
  const nodes = [];
  for (let k = 0; k < count; k += 1) {
    const created = await engine.t.request('POST', '/api/v1/node', {
      body: { name: `${prefix}-${String(k).padStart(3, '0')}`, create_under: orgId },
    });
    expect(created.status, created.text).toBe(201);
    nodes.push({ id: created.body.id as string, token: created.body.token as string });
  }
  await Promise.all(nodes.map((node) => report(engine, node.token)));
  return nodes;
}

export async function report(engine: EngineApp, token: string, body?: unknown): Promise<void> {
  const res = await engine.t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': token },
    ...(body === undefined ? {} : { body }),
  });
  expect(res.status, res.text).toBe(200);
}

/** Moves the clock past the heartbeat timeout and sweeps: every node that did not report is UNREACHABLE. */
export async function outage(engine: EngineApp): Promise<number> {
  engine.at.now += engine.t.config.nodeHeartbeatTimeoutS * 1_000 + 60_000;
  return sweepSilentNodes(engine.t.ctx, 0);
}

export async function subOrg(engine: EngineApp, name: string): Promise<string> {
  const root = (await engine.t.request('GET', '/api/v1/user/me')).body.org_id as string;
  const res = await engine.t.request('POST', '/api/v1/org', { body: { name, parent_id: root } });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** An alert (by e-mail unless an endpoint is given) on nodes going UNREACHABLE anywhere under the caller's organization, grouped as given. */
export async function groupedAlert(
  engine: EngineApp,
  settings: Record<string, unknown> = {},
  type = 'NODE_STATE_CHANGE',
  endpoint: { channel_type?: string; channel_id?: string } = {},
): Promise<string> {
  const root = (await engine.t.request('GET', '/api/v1/user/me')).body.org_id as string;
  const res = await engine.t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: 'Nodes down',
      type,
      settings: { org_id: root, include_child: true, ...settings },
      ...endpoint,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}
