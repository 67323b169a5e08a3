import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Dispatcher, type DispatchPauses } from '../src/features/deliveries/dispatcher.js';
import { startDelivery } from '../src/features/deliveries/start.js';
import { transaction } from '../src/db/transaction.js';
import type { Executor } from '../src/db/types.js';
import { newId } from '../src/lib/ids.js';
import { until } from './support/fleet.js';
import { dialect, startTestApp, type TestApp } from './support/harness.js';
import { deferred, type Deferred } from './support/jobs-fixture.js';
import { webhookNotification } from './support/notifications.js';
import {
  correctEndpoint,
  enabledWebhook,
  receiverAccess,
  startCorrectReceiver,
  type ReceiverWithSecret,
} from './support/webhooks.js';

// A delivery made in a process that runs a dispatcher with a free slot is claimed in its own transaction
// and sent after the commit (docs/deliveries.md#started-where-made). Each rule of that claim with its race
// forced: the competing step runs while the producer's transaction, its lease written, is still open.

let t: TestApp;
let endpoint: ReceiverWithSecret;
let orgId: string;
let userId: string;
/** Requests to notifications wait on this gate while it is set. */
let hold: Promise<void> | undefined;
let inFlight = 0;
let mostInFlight = 0;
let here: Dispatcher | undefined;

beforeAll(async () => {
  endpoint = await startCorrectReceiver();
  const correct = correctEndpoint(() => endpoint.secret.value);
  endpoint.receiver.handle(async (request, response) => {
    if (request.method !== 'POST') return correct(request, response);
    inFlight += 1;
    mostInFlight = Math.max(mostInFlight, inFlight);
    await hold;
    inFlight -= 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{}');
  });
  const access = receiverAccess();
  t = await startTestApp({
    ...access,
    background: false,
    env: { ...access.env, MAX_WEBHOOKS_PER_USER: '50' },
  });
  const me = (await t.request('GET', '/api/v1/user/me')).body;
  orgId = me.org_id as string;
  userId = me.id as string;
});
afterEach(async () => {
  hold = undefined;
  await here?.stop(5_000);
  here = undefined;
  t.ctx.localDispatcher.current = undefined;
});
afterAll(async () => {
  await t.close();
  await endpoint.receiver.close();
});

/**
 * This process's dispatcher: `running`, its claims run as in a worker; else it only sends what is started
 * where it is made, so nothing else is claimed behind the test's back.
 */
function dispatcherHere(concurrency: number, options: { running?: boolean; pauses?: DispatchPauses } = {}) {
  here = new Dispatcher(t.ctx, { concurrency, ...(options.pauses ? { pauses: options.pauses } : {}) });
  if (options.running === true) here.start();
  else t.ctx.localDispatcher.current = here;
  return here;
}

/** `dispatcherHere`, running, once its first claim is over (while a claim runs, no slot is free). */
async function runningHere(concurrency: number, pauses: DispatchPauses = {}) {
  const dispatcher = dispatcherHere(concurrency, { running: true, pauses });
  await until('the first claim over', () => dispatcher.hasFreeSlot);
  return dispatcher;
}

/** A gate for the receiver: requests wait on it until `resolve()`. */
function holdRequests(): Deferred {
  const gate = deferred();
  hold = gate.promise;
  inFlight = 0;
  mostInFlight = 0;
  return gate;
}

/** A notification and its delivery, as an alert makes them, in `trx`; returns the delivery's id. */
async function makeIn(trx: Executor, webhookId: string): Promise<string> {
  const now = Date.now();
  const notification = { id: newId(now), payload: '{}', occurred_at: now };
  const owner = {
    userId,
    orgId,
    webhookId,
    status: 'pending' as const,
    alertName: 'Started where made',
    now,
  };
  await trx
    .insertInto('notifications')
    .values(webhookNotification({ id: notification.id, ...owner }))
    .execute();
  expect(await startDelivery(t.ctx, trx, notification, webhookId, now)).toBe('pending');
  const row = await trx
    .selectFrom('deliveries')
    .select('id')
    .where('notification_id', '=', notification.id)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** One delivery made in a transaction of its own; `during` runs in it before the commit. */
async function make(webhookId: string, during?: (trx: Executor, id: string) => Promise<void>) {
  return transaction(t.ctx.db, async (trx) => {
    const id = await makeIn(trx, webhookId);
    await during?.(trx, id);
    return id;
  });
}

/**
 * A webhook with `count` of its slots taken by another process's dispatcher (their requests held at the
 * receiver), and this process's dispatcher, idle, beside it.
 */
async function slotsTakenElsewhere(name: string, count: number) {
  const hook = await enabledWebhook(t, endpoint, { name });
  const gate = holdRequests();
  const out = await makeMany(hook.id, count);
  const elsewhere = new Dispatcher(t.ctx, { concurrency: 16 }).runDue();
  await until(`${count} requests out`, () => inFlight === count);
  dispatcherHere(16);
  return { hook, gate, out, elsewhere };
}

/** `count` deliveries made one after the other, each in a transaction of its own. */
async function makeMany(webhookId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < count; k += 1) ids.push(await make(webhookId));
  return ids;
}

/** A delivery's row as `db` sees it (the producer's transaction, still open). */
const deliveryRowIn = (db: Executor, id: string) =>
  db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const deliveryRow = (id: string) => deliveryRowIn(t.ctx.db, id);

const postsFor = (ids: readonly string[]) =>
  endpoint.receiver.requests.filter(
    (r) => r.method === 'POST' && ids.includes(String(r.headers['x-service-delivery'])),
  );

const allDelivered = (ids: readonly string[]) =>
  until(`${ids.length} deliveries delivered`, async () => {
    const rows = await Promise.all(ids.map(deliveryRow));
    return rows.every((row) => row.status === 'delivered');
  });

// On PostgreSQL the competing step runs to its end while the producer's transaction is open; on SQLite that
// transaction has the one connection, and the step runs once it has committed.
const meanwhile = (step: Promise<unknown>) => (dialect === 'postgres' ? step.then(() => {}) : undefined);

describe('a delivery started where it is made', () => {
  it('is leased in its own transaction and sent after the commit, with no claim of its own', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Started where made' });
    const claimed: string[] = [];
    await runningHere(4, { afterClaim: async (c) => void claimed.push(...c.map((d) => d.id)) });
    let leasedInside: unknown;
    const id = await make(hook.id, async (trx, made) => {
      const row = await deliveryRowIn(trx, made);
      leasedInside = { attempts: row.attempts, leased: row.lease_until !== null };
    });
    expect(leasedInside).toEqual({ attempts: 1, leased: true });
    await allDelivered([id]);
    expect(claimed).not.toContain(id);
    expect(await deliveryRow(id)).toMatchObject({ status: 'delivered', attempts: 1, lease_until: null });
    expect(postsFor([id])).toHaveLength(1);
  });

  it("keeps to its webhook's slots: none is started where made while they are all taken", async () => {
    const { hook, gate, out, elsewhere } = await slotsTakenElsewhere('Slots all taken', 8);
    const id = await make(hook.id);
    expect(await deliveryRow(id)).toMatchObject({ attempts: 0, lease_until: null });
    gate.resolve();
    await elsewhere;
    await allDelivered([...out, id]);
    expect(mostInFlight).toBe(8);
    expect(postsFor([...out, id])).toHaveLength(9);
  });

  it('counts a slot leased by a transaction still open: the webhook lock decides between producers and claims', async () => {
    const { hook, gate, out, elsewhere } = await slotsTakenElsewhere('Last slot raced', 7);
    // The 8th slot is leased by a transaction still open when another producer makes a delivery to the same
    // webhook, and a claim then looks for its due deliveries: neither may take the slot too.
    const claim = new Dispatcher(t.ctx, { concurrency: 16 });
    let raced!: Promise<string>;
    let claimed!: Promise<number>;
    const last = await make(hook.id, async () => {
      raced = make(hook.id);
      claimed = raced.then(() => claim.runDue());
      await meanwhile(claimed);
    });
    const other = await raced;
    expect(await claimed).toBe(0);
    await until('eight requests out', () => inFlight === 8);
    expect(await deliveryRow(other)).toMatchObject({ attempts: 0, lease_until: null });
    gate.resolve();
    // A success hands its slot on to it, or the claim finds it.
    await until('the raced delivery sent', async () => {
      await claim.runDue();
      return (await deliveryRow(other)).status === 'delivered';
    });
    await elsewhere;
    await allDelivered([...out, last]);
    expect(await deliveryRow(other)).toMatchObject({ attempts: 1 });
    expect(mostInFlight).toBe(8);
    expect(postsFor([...out, last, other])).toHaveLength(9);
  });

  it('starts none at a failing webhook, before its retry time, or ahead of deliveries waiting', async () => {
    dispatcherHere(4);
    const failing = await enabledWebhook(t, endpoint, { name: 'Failing' });
    await t.ctx.db
      .updateTable('webhooks')
      .set({ consecutive_failures: 1 })
      .where('id', '=', failing.id)
      .execute();
    const waiting = await enabledWebhook(t, endpoint, { name: 'Waiting for its retry time' });
    await t.ctx.db
      .updateTable('webhooks')
      .set({ retry_at: Date.now() + 3_600_000 })
      .where('id', '=', waiting.id)
      .execute();
    const queued = await enabledWebhook(t, endpoint, { name: 'With a queue' });
    t.ctx.localDispatcher.current = undefined;
    const first = await make(queued.id);
    t.ctx.localDispatcher.current = here;

    const ids = [await make(failing.id), await make(waiting.id), await make(queued.id)];
    const rows = await Promise.all([first, ...ids].map(deliveryRow));
    expect(rows.map((row) => [row.status, row.attempts, row.lease_until])).toEqual(
      Array.from({ length: 4 }, () => ['pending', 0, null]),
    );
    // Out of the way of the tests that follow: held, their webhooks disabled.
    const webhooks = [failing.id, waiting.id, queued.id];
    await t.ctx.db.updateTable('webhooks').set({ is_enabled: 0 }).where('id', 'in', webhooks).execute();
    await t.ctx.db
      .updateTable('deliveries')
      .set({ status: 'held', next_attempt_at: null })
      .where('webhook_id', 'in', webhooks)
      .execute();
  });

  it('gives its lease back when the slots filled before the commit: the next claim sends it', async () => {
    const other = await enabledWebhook(t, endpoint, { name: 'Fills the only slot' });
    const hook = await enabledWebhook(t, endpoint, { name: 'Given back' });
    t.ctx.localDispatcher.current = undefined;
    const filler = await make(other.id);
    const gate = holdRequests();
    const dispatcher = dispatcherHere(1);
    const id = await make(hook.id, async (trx, made) => {
      const row = await deliveryRowIn(trx, made);
      expect(row.lease_until).not.toBeNull();
      // The dispatcher claims the other webhook's delivery into its one slot before this commit.
      dispatcher.start();
      await meanwhile(until('the slot taken', () => inFlight === 1));
    });
    await until('the slot taken', () => inFlight === 1);
    await until('the lease given back', async () => (await deliveryRow(id)).lease_until === null);
    expect(postsFor([id])).toHaveLength(0);
    gate.resolve();
    await allDelivered([filler, id]);
    expect(mostInFlight).toBe(1);
    expect(postsFor([id])).toHaveLength(1);
  });

  it('is undone with a unit rolled back in a group commit: nothing sent, the other unit sent', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Rolled back' });
    dispatcherHere(4);
    let undone = '';
    const [kept, failed] = await Promise.allSettled([
      t.ctx.commits.run((trx) => makeIn(trx, hook.id)),
      t.ctx.commits.run(async (trx) => {
        undone = await makeIn(trx, hook.id);
        throw new Error('this unit fails');
      }),
    ]);
    expect(failed.status).toBe('rejected');
    const id = (kept as PromiseFulfilledResult<string>).value;
    await allDelivered([id]);
    const gone = await t.ctx.db.selectFrom('deliveries').select('id').where('id', '=', undone).execute();
    expect(gone).toHaveLength(0);
    expect(postsFor([id, undone]).map((r) => r.headers['x-service-delivery'])).toEqual([id]);
  });

  it('never runs more requests than its concurrency, started where made or claimed', async () => {
    const hook = await enabledWebhook(t, endpoint, { name: 'Two at a time' });
    const gate = holdRequests();
    await runningHere(2);
    const ids = await makeMany(hook.id, 5);
    await until('two requests out', () => inFlight === 2);
    const leased = await Promise.all(ids.map(deliveryRow));
    expect(leased.filter((row) => row.lease_until !== null)).toHaveLength(2);
    gate.resolve();
    await allDelivered(ids);
    expect(mostInFlight).toBe(2);
    expect(postsFor(ids)).toHaveLength(5);
  });
});
