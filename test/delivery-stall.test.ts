import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Dispatcher } from '../src/features/deliveries/dispatcher.js';
import { deliveriesWaiting, startDeliveryFixture, type DeliveryFixture } from './support/delivery-fixture.js';
import type { TestApp } from './support/harness.js';

/**
 * A lease covers the request: a run that stalled between its claim and its request (longer than half of
 * JOB_LEASE_MS) renews its lease before it sends, and does not send when the lease ran out, whether or not
 * another run took the delivery meanwhile (docs/deliveries.md, rule 2). The stall is real time passing, the
 * run held at its claim; the lease's end is then written as it would have come.
 */

const JOB_LEASE_MS = 400;
let fx: DeliveryFixture;
let t: TestApp;
let duringStall: (() => Promise<void>) | undefined;

beforeAll(async () => {
  fx = await startDeliveryFixture({
    env: { JOB_LEASE_MS: String(JOB_LEASE_MS), MAX_WEBHOOKS_PER_USER: '10' },
    background: false,
    pauses: {
      afterClaim: async () => {
        const stall = duringStall;
        duringStall = undefined;
        await stall?.();
      },
    },
  });
  t = fx.t;
});
afterAll(() => fx.close());

async function oneDeliveryWaiting() {
  const { webhookId, deliveryIds } = await deliveriesWaiting(fx);
  return { webhookId, deliveryId: deliveryIds[0]! };
}

const posts = (deliveryId: string) =>
  fx.endpoint.receiver.requests.filter(
    (r) => r.method === 'POST' && r.headers['x-service-delivery'] === deliveryId,
  ).length;

/** The run stalls past half its slack, and its lease ends meanwhile (as the clock would have ended it). */
async function stallAndExpire(deliveryId: string) {
  await new Promise((resolve) => setTimeout(resolve, JOB_LEASE_MS / 2 + 50));
  await t.ctx.db
    .updateTable('deliveries')
    .set({ lease_until: Date.now() - 1_000 })
    .where('id', '=', deliveryId)
    .execute();
}

async function row(deliveryId: string) {
  return t.ctx.db
    .selectFrom('deliveries')
    .select(['status', 'attempts', 'lease_until'])
    .where('id', '=', deliveryId)
    .executeTakeFirstOrThrow();
}

describe('a run that stalls between its claim and its request', () => {
  it('does not send once another run took the delivery: it went out once', async () => {
    const { deliveryId } = await oneDeliveryWaiting();
    const other = new Dispatcher(t.ctx, { concurrency: 4 });
    duringStall = async () => {
      await stallAndExpire(deliveryId);
      // Another process claims the delivery whose lease ran out, sends it and records its 2xx.
      expect(await other.runDue()).toBe(1);
    };
    await t.dispatcher.runDue();
    expect(posts(deliveryId)).toBe(1);
    // One request made and recorded: the stalled run's claim is no attempt.
    expect(await row(deliveryId)).toMatchObject({ status: 'delivered', attempts: 1, lease_until: null });
  });

  it('does not send on a lease that ran out though nobody took it; the next claim sends it', async () => {
    const { deliveryId } = await oneDeliveryWaiting();
    duringStall = () => stallAndExpire(deliveryId);
    await t.dispatcher.runDue();
    // The stalled run gave up; the same runDue's next claim took the delivery again and sent it, once.
    expect(posts(deliveryId)).toBe(1);
    expect(await row(deliveryId)).toMatchObject({ status: 'delivered', attempts: 1 });
  });

  it('renews a lease that is still live and sends', async () => {
    const { deliveryId } = await oneDeliveryWaiting();
    duringStall = () => new Promise((resolve) => setTimeout(resolve, JOB_LEASE_MS / 2 + 50));
    await t.dispatcher.runDue();
    expect(posts(deliveryId)).toBe(1);
    expect(await row(deliveryId)).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});
