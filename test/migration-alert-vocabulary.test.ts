import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up } from '../src/db/migrations/0006_alert_vocabulary.js';
import { whoAmI } from './support/alerts.js';
import { startTestApp, type TestApp } from './support/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('migration 0006: the product alert vocabulary', () => {
  it('rewrites stored DISCONNECTED to TERMINATED and gives alerts without conditions all of them', async () => {
    const me = await whoAmI(t);
    const email = await t.request('POST', '/api/v1/mysubscriptions', {
      body: { name: 'seed', type: 'NODE_STATE_CHANGE', settings: { org_id: me.orgId } },
    });
    const channel = email.body.channel.id as string;
    // Rows as the vocabulary before this migration stored them.
    const before: [string, string, string | null][] = [
      ['old-tunnel-both', 'TUNNEL_STATE_CHANGE', 'CONNECTED,DISCONNECTED'],
      ['old-tunnel-down', 'TUNNEL_STATE_CHANGE', 'DISCONNECTED'],
      ['old-tunnel-up', 'TUNNEL_STATE_CHANGE', 'CONNECTED'],
      ['old-ip', 'NODE_IP_CHANGE', null],
      ['old-cert', 'CERT_EXPIRY', null],
      ['old-upgrade', 'NODE_UPGRADE', null],
    ];
    for (const [id, type, alertMe] of before) {
      await t.ctx.db
        .insertInto('alerts')
        .values({
          id,
          user_id: me.id,
          org_id: me.orgId,
          name: id,
          type,
          alert_me: alertMe,
          duration_minutes: type === 'NODE_IP_CHANGE' || type.startsWith('TUNNEL') ? 0 : null,
          include_child: 1,
          suppress_when_node_unreachable: 1,
          channel_type: 'email',
          webhook_id: null,
          email_channel_id: channel,
          created_at: 1,
        })
        .execute();
    }
    const cached = await t.request('GET', '/api/v2/mysubscriptions?size=100');
    expect(cached.body.total_count).toBe(before.length + 1);
    await up(t.ctx.db as unknown as Kysely<unknown>);
    const stored = await t.ctx.db
      .selectFrom('alerts')
      .select(['id', 'alert_me'])
      .where('id', 'like', 'old-%')
      .orderBy('id')
      .execute();
    expect(Object.fromEntries(stored.map((row) => [row.id, row.alert_me]))).toEqual({
      'old-cert': '80,100',
      'old-ip': 'PRIVATE_IP,PUBLIC_IP',
      'old-tunnel-both': 'CONNECTED,TERMINATED',
      'old-tunnel-down': 'TERMINATED',
      'old-tunnel-up': 'CONNECTED',
      'old-upgrade': 'ENABLED,DISABLED,SUCCESSFUL,FAILED',
    });
    // The cached list is invalidated, so the answer shows the new vocabulary at once.
    const read = await t.request('GET', '/api/v2/mysubscriptions?size=100');
    const shown = read.body.results.find((alert: { id: string }) => alert.id === 'old-tunnel-both');
    expect(shown.settings.alert_me).toBe('CONNECTED,TERMINATED');
  });
});
