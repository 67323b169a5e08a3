import { attemptsOf as loggedAttempts } from '../src/features/deliveries/log-repo.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Dispatcher, type DispatchPauses } from '../src/features/deliveries/dispatcher.js';
import { sweepStranded } from '../src/features/deliveries/sweep.js';
import { isPostgres } from '../src/db/connect.js';
import { databaseNow } from '../src/db/now.js';
import { transaction } from '../src/db/transaction.js';
import { claimDue as claimDeliveries } from '../src/features/deliveries/claim-repo.js';
import { readWebhookForDelivery } from '../src/features/deliveries/repo.js';
import { startDelivery } from '../src/features/deliveries/start.js';
import { newId } from '../src/lib/ids.js';
import { claimDue as claimJobs } from '../src/jobs/repo.js';
import { systemClock } from '../src/lib/clock.js';
import { listOutbox } from '../src/mail/repo.js';
import type { Executor } from '../src/db/types.js';
import { aliveNode, until } from './support/fleet.js';
import { dialect, startTestApp, type TestApp, type TestResponse } from './support/harness.js';
import { deferred, type Deferred } from './support/jobs-fixture.js';
import { scrape, valueOf } from './support/metrics.js';
import { webhookNotification } from './support/notifications.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// Each rule of the delivery path, with its race forced: the competing step runs at the racy point of a
// run (a pause injected there), not at a time a sleep hopes for. See docs/deliveries.md.

let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
let userId: string;
/** What the receiver answers to notifications: a status, or a gate to wait on first. */
let answer: { status: number; hold?: Promise<void> } = { status: 200 };
/** When set, each request in arrival order waits for its own answer: the status the test resolves it with. */
let answerEach: Deferred<number>[] | undefined;
let inFlight = 0;
let mostInFlight = 0;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const correct = correctEndpoint(() => endpoint.secret.value);
  endpoint.receiver.handle(async (request, response) => {
    if (request.method !== 'POST') return correct(request, response);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    const own = answerEach?.shift();
    const { status: shared, hold } = answer;
    const status = own === undefined ? (await hold, shared) : await own.promise;
    inFlight -= 1;
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end('{}');
  });
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    background: false,
    env: {
      ...access.env,
      DELIVERY_RETRY_SCHEDULE: '1h',
      MAX_WEBHOOKS_PER_USER: '50',
      MAX_WEBHOOK_ALERTS_PER_USER: '50',
    },
  });
  const me = (await t.request('GET', '/api/v1/user/me')).body;
  orgId = me.org_id as string;
  userId = me.id as string;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

let nodes = 0;
/** `count` notifications to the webhook, each with its pending delivery; returns the deliveries' ids. */
async function deliveriesTo(webhookId: string, count: number): Promise<string[]> {
  nodes += 1;
  const node = await aliveNode(t, `race-${nodes}`);
  const alert = await t.request('POST', '/api/v1/mysubscriptions', {
    body: {
      name: `Tunnels of race-${nodes}`,
      type: 'TUNNEL_STATE_CHANGE',
      settings: { org_id: orgId, node_id: node.id },
      channel_type: 'webhook',
      channel_id: webhookId,
    },
  });
  expect(alert.status, alert.text).toBe(201);
  const tunnels = Array.from({ length: count }, (_, i) => ({
    key: `t${i}`,
    name: `T${i}`,
    state: 'CONNECTED',
  }));
  const report = await t.request('POST', '/api/v1/agent/report', {
    key: null,
    headers: { 'x-node-token': node.token },
    body: { tunnels },
  });
  expect(report.status, report.text).toBe(200);
  const rows = await t.ctx.db
    .selectFrom('deliveries')
    .innerJoin('notifications', 'notifications.id', 'deliveries.notification_id')
    .select('deliveries.id')
    .where('deliveries.webhook_id', '=', webhookId)
    .where('notifications.node_id', '=', node.id)
    .orderBy('deliveries.id')
    .execute();
  expect(rows).toHaveLength(count);
  return rows.map((row) => row.id);
}

const dispatcher = (pauses: DispatchPauses = {}) => new Dispatcher(t.ctx, { concurrency: 64, pauses });

const deliveryRow = (id: string) =>
  t.ctx.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const webhookRow = (id: string) =>
  t.ctx.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

/** The delivery's attempt log, as the API reads it (a success is kept on the delivery's row). */
const attemptsOf = (id: string) => loggedAttempts(t.ctx.db, [id]);

/** The requests the receiver got for these deliveries. */
const postsFor = (ids: readonly string[]) =>
  endpoint.receiver.requests.filter(
    (r) => r.method === 'POST' && ids.includes(String(r.headers['x-service-delivery'])),
  );

/**
 * Resolves once a statement of another session waits for a lock `trx` holds (PostgreSQL). On SQLite the
 * transaction holds the one connection: whatever was started queues behind it, so a turn of the event
 * loop to let it start is all it takes.
 */
async function blockedBehind(trx: Executor): Promise<void> {
  if (!isPostgres(trx)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return;
  }
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
  const pid = rows[0]!.pid;
  await until('another session waiting for our lock', async () => {
    const waiting = await sql<{ n: string }>`
      select count(*) as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(t.ctx.db);
    return Number(waiting.rows[0]!.n) > 0;
  });
}

/** A gate for the receiver: requests wait on it until `open()`. */
function holdRequests(status = 200): Deferred {
  const gate = deferred();
  answer = { status, hold: gate.promise };
  return gate;
}

describe('a pending delivery always has a way forward', () => {
  it('is sent after a verify that commits between a failed run reading its webhook and writing its status', async () => {
    answer = { status: 503 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Verified mid-run' });
    const [id] = await deliveriesTo(hook.id, 1);
    let verify: Promise<TestResponse> | undefined;
    const run = dispatcher({
      // The webhook is edited (disabled) while its request is out...
      afterClaim: async () => {
        const edited = await t.request('PUT', `/api/v1/webhook/${hook.id}`, {
          body: { name: 'Edited mid-run' },
        });
        expect(edited.status, edited.text).toBe(200);
      },
      // ...and verified again right after the failed run has read it as disabled.
      inOutcome: async (_delivery, trx) => {
        verify = t.request('POST', `/api/v1/webhook/${hook.id}/verify`);
        await blockedBehind(trx);
      },
    });
    await run.runDue();
    expect((await verify!).body.status).toBe('SUCCESS');
    const afterVerify = await deliveryRow(id!);
    expect((await webhookRow(hook.id)).is_enabled).toBe(1);
    expect(afterVerify).toMatchObject({ status: 'pending', lease_until: null });

    answer = { status: 200 };
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id!)).toMatchObject({ status: 'delivered' });
  });

  it('sweeps a delivery left with no way forward: logged, counted, then sent or held', async () => {
    answer = { status: 200 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Stranded' });
    const [undated, heldOnEnabled, onDisabled] = await deliveriesTo(hook.id, 3);
    // None of these can happen through the service; written by hand to prove the net under the rules.
    await t.ctx.db
      .updateTable('deliveries')
      .set({ next_attempt_at: null })
      .where('id', '=', undated!)
      .execute();
    await t.ctx.db
      .updateTable('deliveries')
      .set({ status: 'held', next_attempt_at: null })
      .where('id', '=', heldOnEnabled!)
      .execute();
    const other = await enabledWebhook(t, endpoint, { name: 'Disabled by hand' });
    await t.ctx.db
      .updateTable('deliveries')
      .set({ webhook_id: other.id })
      .where('id', '=', onDisabled!)
      .execute();
    await t.ctx.db.updateTable('webhooks').set({ is_enabled: 0 }).where('id', '=', other.id).execute();
    const counted = async () => valueOf(await scrape(t), 'edgewatch_stranded_deliveries_total') ?? 0;
    const before = await counted();
    const logged = () => t.logs.filter((line) => line.includes('had no way forward')).length;
    const loggedBefore = logged();

    expect(await sweepStranded(t.ctx)).toBe(3);
    expect((await counted()) - before).toBe(3);
    expect(logged() - loggedBefore).toBe(3);
    expect(await dispatcher().runDue()).toBe(2);
    expect(await deliveryRow(undated!)).toMatchObject({ status: 'delivered' });
    expect(await deliveryRow(heldOnEnabled!)).toMatchObject({ status: 'delivered' });
    expect(await deliveryRow(onDisabled!)).toMatchObject({ status: 'held', next_attempt_at: null });
    expect(await sweepStranded(t.ctx)).toBe(0);
  });

  /** A webhook enabled with a pending delivery, then disabled by hand: what the sweep exists to find. */
  async function pendingAtDisabledWebhook(name: string) {
    const hook = await enabledWebhook(t, endpoint, { name });
    const [id] = await deliveriesTo(hook.id, 1);
    await t.ctx.db.updateTable('webhooks').set({ is_enabled: 0 }).where('id', '=', hook.id).execute();
    return { hook, id: id! };
  }

  it('holds nothing at a webhook verified after the sweep found it disabled, before it took the lock', async () => {
    answer = { status: 200 };
    const { hook, id } = await pendingAtDisabledWebhook('Verified before the sweep locks');
    const found = await sweepStranded(t.ctx, {
      afterFinding: async () => {
        const verified = await t.request('POST', `/api/v1/webhook/${hook.id}/verify`);
        expect(verified.body.status).toBe('SUCCESS');
      },
    });
    expect(found).toBe(0);
    expect(await deliveryRow(id)).toMatchObject({ status: 'pending' });
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id)).toMatchObject({ status: 'delivered' });
  });

  it('leaves a verify that waits for the sweep to send what the sweep held', async () => {
    answer = { status: 200 };
    const { hook, id } = await pendingAtDisabledWebhook('Verified while the sweep holds');
    let verify: Promise<TestResponse> | undefined;
    const found = await sweepStranded(t.ctx, {
      beforeWriting: async (trx) => {
        verify = t.request('POST', `/api/v1/webhook/${hook.id}/verify`);
        await blockedBehind(trx);
      },
    });
    expect(found).toBe(1);
    expect((await verify!).body.status).toBe('SUCCESS');
    expect(await deliveryRow(id)).toMatchObject({ status: 'pending' });
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id)).toMatchObject({ status: 'delivered' });
  });
});

describe('no re-send after a 2xx', () => {
  it("records each delivery on its own: a webhook force-deleted mid-send sinks none of another's", async () => {
    answer = { status: 200 };
    const doomed = await enabledWebhook(t, endpoint, { name: 'Doomed' });
    const kept = await enabledWebhook(t, endpoint, { name: 'Kept' });
    const doomedIds = await deliveriesTo(doomed.id, 3);
    const keptIds = await deliveriesTo(kept.id, 3);
    const run = dispatcher({
      afterClaim: async (claimed) => {
        expect(claimed.length).toBe(6);
        const removed = await t.request('DELETE', `/api/v1/user/webhook/${doomed.id}?force=true`);
        expect(removed.status, removed.text).toBe(200);
      },
    });
    expect(await run.runDue()).toBe(6);
    for (const id of keptIds)
      expect(await deliveryRow(id)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(await dispatcher().runDue()).toBe(0);
    expect(postsFor(keptIds)).toHaveLength(3);
    expect(postsFor(doomedIds)).toHaveLength(3);
  });

  it('fences a run whose lease ran out: it records nothing over the newer run', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Fenced' });
    const [id] = await deliveriesTo(hook.id, 1);
    answer = { status: 200 };
    const stale = dispatcher({
      afterClaim: async () => {
        // The lease runs out under this run (a process frozen past it); another run takes the delivery.
        await t.ctx.db.updateTable('deliveries').set({ lease_until: 0 }).where('id', '=', id!).execute();
        expect(await dispatcher().runDue()).toBe(1);
        answer = { status: 503 };
      },
    });
    expect(await stale.runDue()).toBe(1);
    // The stale run's 503 is not recorded: one request counted, the newer run's.
    expect(await deliveryRow(id!)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
    expect((await attemptsOf(id!)).map((attempt) => attempt.status_code)).toEqual([200]);
    expect((await webhookRow(hook.id)).consecutive_failures).toBe(0);
    expect(t.logs.some((line) => line.includes('taken over or removed meanwhile'))).toBe(true);
  });

  it('fences a run given back at shutdown: it records nothing over the run that claims the delivery next', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Given back' });
    const [id] = await deliveriesTo(hook.id, 1);
    const gate = holdRequests(200);
    const fencedOut = () => t.logs.filter((line) => line.includes('taken over or removed meanwhile')).length;
    const fencedBefore = fencedOut();
    const stopping = dispatcher();
    stopping.start();
    await until('the request out', () => inFlight === 1);
    // Its shutdown deadline passes with the request still out: the lease is given back.
    await stopping.stop(10);
    // Its request's answer never came back: no request is counted for it.
    expect(await deliveryRow(id!)).toMatchObject({ status: 'pending', lease_until: null, attempts: 0 });
    const next = dispatcher().runDue();
    await until('the next run out too', () => inFlight === 2);
    gate.resolve();
    expect(await next).toBe(1);
    await until('the given-back run to find itself fenced out', () => fencedOut() > fencedBefore);
    expect(await deliveryRow(id!)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(await attemptsOf(id!)).toHaveLength(1);
  });

  it('holds no lease while a delivery waits for a slot: only the requests out are leased', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Slots' });
    const ids = await deliveriesTo(hook.id, 12);
    const gate = holdRequests();
    mostInFlight = 0;
    const running = dispatcher().runDue();
    await until('eight requests out', () => inFlight === 8);
    const rows = await Promise.all(ids.map(deliveryRow));
    const leased = rows.filter((row) => row.lease_until !== null);
    expect(leased).toHaveLength(8);
    const leastLease = Math.min(...leased.map((row) => Number(row.lease_until)));
    expect(leastLease).toBeGreaterThanOrEqual(Date.now() + t.config.deliveryTimeoutMs);
    expect(rows.filter((row) => row.lease_until === null && row.attempts === 0)).toHaveLength(4);
    answer = { status: 200 };
    gate.resolve();
    await running;
    expect(mostInFlight).toBe(8);
    for (const id of ids) expect(await deliveryRow(id)).toMatchObject({ status: 'delivered' });
  });
});

describe('the per-webhook gate', () => {
  it('keeps to the slots of a webhook across dispatchers, however their claims interleave', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Two dispatchers' });
    const ids = await deliveriesTo(hook.id, 12);
    const gate = holdRequests();
    mostInFlight = 0;
    let second: Promise<number> | undefined;
    const first = dispatcher({
      // The second dispatcher claims while the first holds the webhook between its lock and its count.
      inClaim: async () => {
        if (second !== undefined) return;
        second = dispatcher().runDue();
        await new Promise((resolve) => setTimeout(resolve, 50));
      },
    });
    const firstRun = first.runDue();
    await until('eight requests out', () => inFlight === 8);
    expect(await second).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(inFlight).toBe(8);
    answer = { status: 200 };
    gate.resolve();
    await firstRun;
    expect(mostInFlight).toBe(8);
    expect(postsFor(ids)).toHaveLength(12);
  });

  it('sends nothing after a failed request before the retry time, and waiting counts no attempt', async () => {
    answer = { status: 503 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Gate' });
    const ids = await deliveriesTo(hook.id, 10);
    const warnings = t.logs.filter((line) => line.includes('"level":40')).length;
    expect(await dispatcher().runDue()).toBe(8);
    // The eight went out together and failed together: one failure, and the gate shut for an hour.
    expect((await webhookRow(hook.id)).consecutive_failures).toBe(1);
    expect(Number((await webhookRow(hook.id)).retry_at)).toBeGreaterThan(Date.now() + 40 * 60_000);
    expect(await dispatcher().runDue()).toBe(0);
    expect(postsFor(ids)).toHaveLength(8);
    const waiting = (await Promise.all(ids.map(deliveryRow))).filter((row) => row.attempts === 0);
    expect(waiting).toHaveLength(2);
    expect(waiting.every((row) => row.status === 'pending' && row.lease_until === null)).toBe(true);
    expect(t.logs.filter((line) => line.includes('"level":40')).length).toBe(warnings);
  });

  it('hands no slot on after a failure of the same burst: the gate it shut holds for the successes too', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Failure mid-burst' });
    const ids = await deliveriesTo(hook.id, 12);
    answerEach = Array.from({ length: 8 }, () => deferred<number>());
    const answers = answerEach.slice();
    const running = dispatcher().runDue();
    await until('eight requests out', () => inFlight === 8);
    answers[0]!.resolve(503);
    await until('the failure recorded', async () => (await webhookRow(hook.id)).consecutive_failures === 1);
    for (const own of answers.slice(1)) own.resolve(200);
    await running;
    answerEach = undefined;
    expect(postsFor(ids)).toHaveLength(8);
    const rows = await Promise.all(ids.map(deliveryRow));
    expect(rows.filter((row) => row.status === 'delivered')).toHaveLength(7);
    expect(rows.filter((row) => row.status === 'pending' && row.lease_until === null)).toHaveLength(5);
  });

  it('sends 30 deliveries through claims that never exceed the webhook’s slots', async () => {
    answer = { status: 200 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Handed over' });
    const ids = await deliveriesTo(hook.id, 30);
    mostInFlight = 0;
    const claimed: number[] = [];
    const run = dispatcher({ afterClaim: async (batch) => void claimed.push(batch.length) });
    expect(await run.runDue()).toBe(30);
    // Every claim takes at most the eight slots, and the requests out never exceed them.
    expect(claimed.every((count) => count <= 8)).toBe(true);
    expect(claimed.reduce((sum, count) => sum + count, 0)).toBe(30);
    expect(mostInFlight).toBeLessThanOrEqual(8);
    const rows = await Promise.all(ids.map(deliveryRow));
    expect(rows.every((row) => row.status === 'delivered' && row.attempts === 1)).toBe(true);
  });

  it('sends nothing to a disabled webhook beyond the requests already out when it was disabled', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Disabled mid-burst' });
    const ids = await deliveriesTo(hook.id, 12);
    const gate = holdRequests();
    const running = dispatcher().runDue();
    await until('eight requests out', () => inFlight === 8);
    const edited = await t.request('PUT', `/api/v1/webhook/${hook.id}`, { body: { name: 'Now unverified' } });
    expect(edited.status, edited.text).toBe(200);
    answer = { status: 200 };
    gate.resolve();
    await running;
    expect(await dispatcher().runDue()).toBe(0);
    expect(postsFor(ids)).toHaveLength(8);
    const statuses = (await Promise.all(ids.map(deliveryRow))).map((row) => row.status);
    expect(statuses.filter((status) => status === 'delivered')).toHaveLength(8);
    expect(statuses.filter((status) => status === 'held')).toHaveLength(4);
  });
  it('sends nothing more to a webhook disabled by a 410 mid-burst than the requests already out', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Gone mid-burst' });
    const ids = await deliveriesTo(hook.id, 12);
    const gate = holdRequests(410);
    const running = dispatcher().runDue();
    await until('eight requests out', () => inFlight === 8);
    gate.resolve();
    await running;
    expect(await dispatcher().runDue()).toBe(0);
    expect(postsFor(ids)).toHaveLength(8);
    expect(await webhookRow(hook.id)).toMatchObject({ is_enabled: 0, disabled_reason: 'gone' });
    const rows = await Promise.all(ids.map(deliveryRow));
    expect(rows.every((row) => row.status === 'held' && row.lease_until === null)).toBe(true);
    const told = (await listOutbox(t.ctx.db)).filter((mail) =>
      mail.subject.includes('"Gone mid-burst" was disabled'),
    );
    expect(told).toHaveLength(1);
  });
});

describe('a producer racing a change of its webhook', () => {
  /**
   * A notification and its delivery made as an alert makes them, in a transaction the test runs `during`
   * in, once the delivery has been written (its webhook read as it was then) and before the commit.
   */
  async function produce(webhookId: string, during: () => Promise<void>): Promise<string> {
    const now = Date.now();
    const notificationId = newId(now);
    await transaction(t.ctx.db, async (trx) => {
      const webhook = await readWebhookForDelivery(trx, webhookId);
      const status = webhook?.is_enabled === 1 ? 'pending' : 'held';
      await trx
        .insertInto('notifications')
        .values(
          webhookNotification({
            id: notificationId,
            userId,
            orgId,
            webhookId,
            status,
            alertName: 'Raced',
            now,
          }),
        )
        .execute();
      expect(
        await startDelivery(
          t.ctx,
          trx,
          { id: notificationId, payload: '{}', occurred_at: now },
          webhookId,
          now,
        ),
      ).toBe(status);
      await during();
    });
    const row = await t.ctx.db
      .selectFrom('deliveries')
      .select('id')
      .where('notification_id', '=', notificationId)
      .executeTakeFirstOrThrow();
    return row.id;
  }

  // On PostgreSQL the change commits while the producer's transaction is open (it does not wait for it);
  // on SQLite that transaction has the one connection, and the change runs once it has committed.
  const meanwhile = (change: Promise<TestResponse>) =>
    dialect === 'postgres' ? change.then(() => {}) : undefined;

  it('holds at the next claim a delivery made pending while its webhook was being disabled', async () => {
    answer = { status: 200 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Edited under a producer' });
    let edit: Promise<TestResponse> | undefined;
    const id = await produce(hook.id, async () => {
      edit = t.request('PUT', `/api/v1/webhook/${hook.id}`, { body: { name: 'Edited mid-production' } });
      await meanwhile(edit);
    });
    expect((await edit!).status).toBe(200);
    expect(await dispatcher().runDue()).toBe(0);
    expect(await deliveryRow(id)).toMatchObject({ status: 'held', next_attempt_at: null });
    expect(postsFor([id])).toHaveLength(0);
  });

  it('sends at the next claim a delivery made held while its webhook was being verified', async () => {
    answer = { status: 200 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Verified under a producer' });
    await t.request('PUT', `/api/v1/webhook/${hook.id}`, { body: { name: 'Unverified under a producer' } });
    let verify: Promise<TestResponse> | undefined;
    const id = await produce(hook.id, async () => {
      verify = t.request('POST', `/api/v1/webhook/${hook.id}/verify`);
      await meanwhile(verify);
    });
    expect((await verify!).body.status).toBe('SUCCESS');
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id)).toMatchObject({ status: 'delivered' });
  });
});

describe('retry now', () => {
  it('sends a pending delivery waiting for its retry time now, with its id; 422 while the webhook is disabled', async () => {
    answer = { status: 503 };
    const hook = await enabledWebhook(t, endpoint, { name: 'Retry now' });
    const [id] = await deliveriesTo(hook.id, 1);
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id!)).toMatchObject({ status: 'pending', attempts: 1 });
    expect(await dispatcher().runDue()).toBe(0);

    answer = { status: 200 };
    const retried = await t.request('POST', `/api/v1/webhook/${hook.id}/deliveries/${id}/retry`);
    expect(retried.status, retried.text).toBe(202);
    expect(await dispatcher().runDue()).toBe(1);
    expect(await deliveryRow(id!)).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(new Set(postsFor([id!]).map((r) => r.headers['x-service-delivery']))).toEqual(new Set([id]));

    await t.request('PUT', `/api/v1/webhook/${hook.id}`, { body: { name: 'Retry now, edited' } });
    const refused = await t.request('POST', `/api/v1/webhook/${hook.id}/deliveries/${id}/retry`);
    expect(refused.status, refused.text).toBe(422);
  });
});

describe('the job queue', () => {
  it('takes at most its LIMIT in a claim, and concurrent claims never take the same job', async () => {
    await t.ctx.jobs.enqueueMany(
      t.ctx.db,
      Array.from({ length: 10 }, (_, n) => ({ kind: 'test.limit', payload: { n } })),
    );
    const claim = (workerId: string) =>
      claimJobs(t.ctx.db, {
        kind: 'test.limit',
        now: databaseNow(t.ctx.db, t.ctx.clock),
        leaseMs: 60_000,
        limit: 3,
        workerId,
      });
    const batches = await Promise.all([claim('a'), claim('b'), claim('c')]);
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(3);
    const ids = batches.flat().map((job) => job.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(9);
  });
});

// Last in the file: on SQLite it leaves a lease an hour ahead behind.
describe("leases on the database's clock", () => {
  /** `work` run as on a host whose clock is an hour ahead of the database's. */
  async function anHourAhead<T>(work: () => Promise<T>): Promise<T> {
    const real = Date.now.bind(Date);
    const skew = vi.spyOn(Date, 'now').mockImplementation(() => real() + 3_600_000);
    try {
      return await work();
    } finally {
      skew.mockRestore();
    }
  }

  // On PostgreSQL several hosts share the queue, and the database's clock dates every lease. SQLite is one
  // host's file: its process clock is the only clock, and a jump of it is seen by every claim alike.
  const stolenOnce = dialect === 'postgres' ? 0 : 1;

  it('a host whose clock runs ahead takes no live lease of a delivery', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Clock ahead' });
    const [id] = await deliveriesTo(hook.id, 1);
    const gate = holdRequests();
    const running = dispatcher().runDue();
    await until('the request out', () => inFlight === 1);
    const claim = () =>
      transaction(t.ctx.db, (trx) =>
        claimDeliveries(trx, {
          clock: systemClock,
          leaseMs: 60_000,
          limit: 10,
          perWebhook: t.config.deliveryConcurrencyPerWebhook,
        }),
      );
    const stolen = (await anHourAhead(claim)).claimed;
    // (On SQLite the hour also opens the gates other tests shut: only this webhook's claim is the point.)
    const ofThisWebhook = stolen.filter((delivery) => delivery.webhook_id === hook.id);
    expect(ofThisWebhook.map((delivery) => delivery.id)).toEqual(stolenOnce === 0 ? [] : [id]);
    answer = { status: 200 };
    gate.resolve();
    await running;
    expect(postsFor([id!])).toHaveLength(1);
  });

  it('a host whose clock runs ahead takes no live lease of a job', async () => {
    await t.ctx.jobs.enqueue(t.ctx.db, 'test.clock-ahead', null);
    const claim = (workerId: string) =>
      claimJobs(t.ctx.db, {
        kind: 'test.clock-ahead',
        now: databaseNow(t.ctx.db, systemClock),
        leaseMs: 60_000,
        limit: 1,
        workerId,
      });
    expect(await claim('here')).toHaveLength(1);
    expect(await anHourAhead(() => claim('ahead'))).toHaveLength(stolenOnce);
  });
});
