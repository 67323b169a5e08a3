import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aliveNode } from './support/fleet.js';
import {
  deliveriesWaiting,
  startDeliveryFixture,
  tunnels,
  webhookWithAlert,
  type DeliveryFixture,
} from './support/delivery-fixture.js';
import { dialect, type TestApp } from './support/harness.js';
import { scrape, valueOf } from './support/metrics.js';
import { measureWrites } from './support/write-cost.js';

/**
 * What a notification costs the database, counted rather than timed (counts do not drift with the machine):
 * for a burst of 100 changes, each one report, one event, one notification and one delivery, sent and its
 * outcome recorded, the statements run, the commits, and the B-trees written. Each figure is held under a
 * budget (docs/benchmarks.md#what-a-notification-writes), so a change that adds to the path fails here.
 *
 * B-trees written are read off the database, not off our SQL (support/write-cost.ts): on SQLite, the B-trees
 * whose pages each commit put in the write-ahead log, with the log's bytes; on PostgreSQL, each row written
 * times the B-trees it wrote (its table, and every index unless the update was HOT).
 */

const CHANGES = 100;

/**
 * Per notification, at most: measured on this path (SQLite 10.46 statements, 1.27 commits, 19.8 B-trees,
 * 107 kB of log; PostgreSQL 11.33, 1.27, 51.4), with a little room for the batching of outcomes and for
 * page splits to vary. One statement of each is the token's lookup (authentication); PostgreSQL's one more
 * is the NOTIFY that wakes the other processes. Lower them as the path gets leaner; never raise them without
 * a decision.
 */
const BUDGET: Record<
  typeof dialect,
  { statements: number; commits: number; btrees: number; walBytes?: number }
> = {
  sqlite: { statements: 10.75, commits: 1.35, btrees: 20.5, walBytes: 110_000 },
  postgres: { statements: 11.5, commits: 1.35, btrees: 52.5 },
};

let fx: DeliveryFixture;
let t: TestApp;
let counting = false;
const statements: string[] = [];

/** Every statement run in this process, while counting: better-sqlite3's, or pg's. */
function countStatements(): void {
  // The statements run, wherever they come from: the pg client, or better-sqlite3's prepared statements.
  if (dialect === 'sqlite') {
    const probe = new Sqlite(':memory:');
    const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, unknown>;
    probe.close();
    for (const method of ['run', 'get', 'all', 'iterate'] as const) {
      const original = proto[method] as (...args: unknown[]) => unknown;
      proto[method] = function (this: { source: string }, ...args: unknown[]) {
        if (counting) statements.push(this.source);
        return original.apply(this, args);
      };
    }
    return;
  }
  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = client.query;
  client.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    if (counting) statements.push(typeof first === 'string' ? first : (first.text ?? ''));
    return original.apply(this, args);
  };
}

beforeAll(async () => {
  countStatements();
  fx = await startDeliveryFixture({ background: false });
  t = fx.t;
});
afterAll(() => fx.close());

/** The table a write statement writes, or undefined for a read. */
function writtenTable(sql: string): string | undefined {
  const match = /^\s*(?:with\b[\s\S]*?\)\s*)?(insert\s+into|update|delete\s+from)\s+"?([a-z_]+)"?/i.exec(sql);
  return match?.[2];
}

describe('what a notification writes', () => {
  it(`stays within its budget of statements, commits and B-trees for a burst of ${CHANGES}`, async () => {
    const { webhookId } = await webhookWithAlert(fx);
    const nodes: { token: string }[] = [];
    for (let i = 0; i < CHANGES; i += 1) {
      nodes.push(await aliveNode(t, `budget-${i}`, { report: tunnels('wg0') }));
    }
    await t.dispatcher.runDue();

    const written = await measureWrites(t.ctx.db, async () => {
      counting = true;
      for (const node of nodes) {
        const res = await t.request('POST', '/api/v1/agent/report', {
          key: null,
          headers: { 'x-node-token': node.token },
          body: { tunnels: [{ key: 'wg0', name: 'wg0', state: 'TERMINATED' }] },
        });
        expect(res.status).toBe(200);
      }
      expect(await t.dispatcher.runDue()).toBe(CHANGES);
      counting = false;
    });

    const delivered = await t.ctx.db
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'delivered')
      .executeTakeFirstOrThrow();
    expect(Number(delivered.n)).toBe(2 * CHANGES);
    const commits = statements.filter((sql) => /^\s*commit\b/i.test(sql)).length;
    const perNotification = {
      statements: statements.length / CHANGES,
      commits: commits / CHANGES,
      btrees: written.btrees / CHANGES,
      ...(written.walBytes === undefined ? {} : { walBytes: written.walBytes / CHANGES }),
    };
    const byKind = new Map<string, number>();
    for (const statement of statements) {
      const table = writtenTable(statement);
      const kind =
        table ?? /^\s*(begin|commit|savepoint|release)/i.exec(statement)?.[1]?.toLowerCase() ?? 'read';
      byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    }
    // The breakdown docs/benchmarks.md keeps, for whoever makes the path leaner.
    console.log(
      `${dialect}: per notification`,
      perNotification,
      Object.fromEntries(byKind),
      Object.fromEntries(Object.entries(written.byBtree).map(([name, n]) => [name, n / CHANGES])),
    );
    const budget = BUDGET[dialect];
    expect(perNotification.statements).toBeLessThanOrEqual(budget.statements);
    expect(perNotification.commits).toBeLessThanOrEqual(budget.commits);
    expect(perNotification.btrees).toBeLessThanOrEqual(budget.btrees);
    if (budget.walBytes !== undefined) expect(perNotification.walBytes).toBeLessThanOrEqual(budget.walBytes);
  });
});

describe('the oldest pending delivery', () => {
  it("is read from each webhook's queue: its age while it waits, 0 once sent", async () => {
    const { deliveryIds } = await deliveriesWaiting(fx, 2);
    await t.ctx.db
      .updateTable('deliveries')
      .set({ created_at: Date.now() - 90_000 })
      .where('id', '=', deliveryIds[0]!)
      .execute();
    const age = valueOf(await scrape(t), 'edgewatch_oldest_pending_delivery_age_seconds')!;
    expect(age).toBeGreaterThanOrEqual(90);
    expect(age).toBeLessThan(120);
    expect(await t.dispatcher.runDue()).toBeGreaterThanOrEqual(2);
    expect(valueOf(await scrape(t), 'edgewatch_oldest_pending_delivery_age_seconds')).toBe(0);
  });
});
