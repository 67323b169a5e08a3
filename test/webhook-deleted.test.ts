import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transaction } from '../src/db/transaction.js';
import { createNotification } from '../src/features/notifications/create.js';
import { findAlert } from '../src/features/notifications/repo.js';
import { aliveNode } from './support/fleet.js';
import {
  startDeliveryFixture,
  tunnels,
  webhookWithAlert,
  type DeliveryFixture,
} from './support/delivery-fixture.js';
import type { TestApp } from './support/harness.js';

/**
 * A webhook deleted before it sent what it had: every such notification ends `cancelled` with the reason
 * `webhook_deleted`, whether it was made before the deletion or by a producer that read its alert before the
 * deletion and wrote after it (docs/deliveries.md). The dispatcher does not run: nothing is sent meanwhile.
 */

let fx: DeliveryFixture;
let t: TestApp;

beforeAll(async () => {
  fx = await startDeliveryFixture({ background: false });
  t = fx.t;
});
afterAll(() => fx.close());

async function notificationsOf(webhookId: string) {
  return t.ctx.db
    .selectFrom('notifications')
    .select(['status', 'reason'])
    .where('webhook_id', '=', webhookId)
    .orderBy('id')
    .execute();
}

describe('a webhook deleted with force', () => {
  it('cancels what it had pending or held, in its own transaction', async () => {
    const { webhookId } = await webhookWithAlert(fx, 'Pending');
    await aliveNode(t, 'gw-pending', { report: tunnels('a', 'b') });
    const held = await webhookWithAlert(fx, 'Held');
    await t.request('PUT', `/api/v1/webhook/${held.webhookId}`, { body: { name: 'Held, edited' } });
    await aliveNode(t, 'gw-held', { report: tunnels('c') });
    // Each report notified both alerts: the enabled webhook's are pending, the edited one's held.
    expect((await notificationsOf(webhookId)).map((n) => n.status)).toEqual([
      'pending',
      'pending',
      'pending',
    ]);
    expect((await notificationsOf(held.webhookId)).map((n) => n.status)).toEqual(['held']);
    for (const id of [webhookId, held.webhookId]) {
      expect((await t.request('DELETE', `/api/v1/webhook/${id}?force=true`)).status).toBe(200);
      const ended = await notificationsOf(id);
      expect(ended.length).toBeGreaterThan(0);
      expect(ended.every((n) => n.status === 'cancelled' && n.reason === 'webhook_deleted')).toBe(true);
      const deliveries = await t.ctx.db
        .selectFrom('deliveries')
        .select('id')
        .where('webhook_id', '=', id)
        .execute();
      expect(deliveries).toEqual([]);
    }
    const listed = await t.request('GET', '/api/v2/notification?status=cancelled&size=100');
    expect(listed.body.total_count).toBe(4);
  });

  it('cancels the notification of a producer that read its alert before the deletion and wrote after it', async () => {
    const { webhookId, alertId } = await webhookWithAlert(fx, 'Raced');
    // The producer's read: the alert, as matching found it before the deletion committed.
    const alert = (await findAlert(t.ctx.db, alertId))!;
    expect((await t.request('DELETE', `/api/v1/webhook/${webhookId}?force=true`)).status).toBe(200);
    // The change it was notifying of, and its write, after the deletion.
    const node = await aliveNode(t, 'gw-raced', { report: tunnels('d') });
    const event = await t.ctx.db
      .selectFrom('fleet_events')
      .selectAll()
      .where('node_id', '=', node.id)
      .where('type', '=', 'TUNNEL_STATE_CHANGE')
      .executeTakeFirstOrThrow();
    await transaction(t.ctx.db, (trx) => createNotification(t.ctx, trx, alert, event));
    expect(await notificationsOf(webhookId)).toEqual([{ status: 'cancelled', reason: 'webhook_deleted' }]);
  });
});
