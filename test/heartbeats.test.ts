import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { buildApp } from '../src/app.js';
import type { AppContext } from '../src/context.js';
import { sweepSilentNodes } from '../src/features/fleet/liveness/sweep.js';
import { HEARTBEAT_FLUSH_MS } from '../src/features/fleet/reports/heartbeats.js';
import { eventsOfNode } from '../src/features/fleet/events/repo.js';
import type { App } from '../src/http/types.js';
import { transaction } from '../src/db/transaction.js';
import { closeContext, openContext } from '../src/runtime.js';
import { startTestApp, type TestApp } from './support/harness.js';

// Reports that change nothing: no event, no write of their own, the time written by the buffer; and
// liveness still right with two API processes, each with its own buffer.
const run = promisify(execFile);
let t: TestApp;
let other: { app: App; ctx: AppContext };

const STATE = {
  addresses: [{ type: 'InternalIP', address: '10.0.0.7' }],
  software_version: '5.0.0',
  tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED' }],
  services: [{ key: 'db', name: 'Database', status: 'HEALTHY' }],
};

beforeAll(async () => {
  t = await startTestApp();
  const ctx = await openContext(t.config, pino({ level: 'silent' }), {
    ...(t.database.schema === undefined ? {} : { schema: t.database.schema }),
  });
  other = { ctx, app: await buildApp(ctx) };
});
afterAll(async () => {
  await other.app.close();
  await closeContext(other.ctx);
  await t.close();
});

async function registered(name: string) {
  const created = await t.request('POST', '/api/v1/node', { body: { name } });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id as string, token: created.body.token as string };
}

async function report(token: string, body: unknown, app: App = t.app) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agent/report',
    headers: { 'x-node-token': token, 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
}

async function stored(id: string) {
  return t.ctx.db
    .selectFrom('nodes')
    .select(['node_state', 'last_seen_at', 'sequence'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

describe('cheap heartbeats', () => {
  it('writes nothing for a report that repeats the last one until the buffer is flushed', async () => {
    const node = await registered('steady');
    await report(node.token, STATE);
    const before = await stored(node.id);
    const events = (await eventsOfNode(t.ctx.db, node.id)).length;

    for (let i = 0; i < 5; i += 1) {
      await tick();
      await report(node.token, i % 2 === 0 ? STATE : {});
    }
    expect(await stored(node.id)).toEqual(before);
    expect((await eventsOfNode(t.ctx.db, node.id)).length).toBe(events);

    await t.app.heartbeats.flush();
    const after = await stored(node.id);
    expect(Number(after.last_seen_at)).toBeGreaterThan(Number(before.last_seen_at));
    expect(after.sequence).toBe(before.sequence);
    expect((await eventsOfNode(t.ctx.db, node.id)).length).toBe(events);
  });

  it('applies at once a report with any change, and one listing a tunnel that was forgotten', async () => {
    const node = await registered('changing');
    await report(node.token, STATE);
    await report(node.token, STATE);
    await report(node.token, { ...STATE, tunnels: [{ key: 'up', name: 'Uplink', state: 'TERMINATED' }] });
    const last = (await eventsOfNode(t.ctx.db, node.id)).at(-1);
    expect(last).toMatchObject({ type: 'TUNNEL_STATE_CHANGE', condition: 'TERMINATED' });

    const tunnel = (await t.request('GET', `/api/v2/tunnel?node_id=${node.id}`)).body.results[0];
    expect((await t.request('DELETE', `/api/v1/tunnel/${tunnel.id}`)).status).toBe(200);
    await report(node.token, { ...STATE, tunnels: [{ key: 'up', name: 'Uplink', state: 'TERMINATED' }] });
    const again = await t.request('GET', `/api/v2/tunnel?node_id=${node.id}`);
    expect(again.body.results).toEqual([expect.objectContaining({ key: 'up', state: 'TERMINATED' })]);
    expect(again.body.results[0].id).not.toBe(tunnel.id);
  });

  it('keeps a peer that changed without a state change', async () => {
    const peer = await registered('peer');
    const node = await registered('peered');
    await report(node.token, STATE);
    await report(node.token, {
      tunnels: [{ key: 'up', name: 'Uplink', state: 'CONNECTED', peer_node_id: peer.id }],
    });
    const tunnel = (await t.request('GET', `/api/v2/tunnel?node_id=${node.id}`)).body.results[0];
    expect(tunnel.peer_node_id).toBe(peer.id);
  });

  it('brings back a node the sweep judged while its heartbeat waited in the buffer', async () => {
    const node = await registered('judged-too-early');
    await report(node.token, STATE);
    const seen = Number((await stored(node.id)).last_seen_at);
    await tick();
    await report(node.token, STATE);
    const timeoutMs = t.config.nodeHeartbeatTimeoutS * 1_000;
    const later = { ...t.ctx, clock: { now: () => seen + timeoutMs + HEARTBEAT_FLUSH_MS + 1 } };
    expect(await sweepSilentNodes(later, 0)).toBeGreaterThanOrEqual(1);
    expect((await stored(node.id)).node_state).toBe('UNREACHABLE');

    await t.app.heartbeats.flush();
    expect((await stored(node.id)).node_state).toBe('ALIVE');
    const states = (await eventsOfNode(t.ctx.db, node.id))
      .filter((event) => event.type === 'NODE_STATE_CHANGE')
      .sort((a, b) => a.sequence - b.sequence)
      .map((event) => event.current_state);
    expect(states).toEqual(['ALIVE', 'UNREACHABLE', 'ALIVE']);
  });

  it('lets a transaction that read a node still write it while the buffer writes its heartbeat', async () => {
    // On SQLite the buffer writes on a connection of its own: a transaction that had read before that
    // write committed could not have written at all, had it not taken the write lock at its start.
    const node = await registered('written-meanwhile');
    await report(node.token, STATE);
    await tick();
    await report(node.token, STATE);
    await t.app.heartbeats.flush(); // the writer is ready
    const before = await stored(node.id);
    await tick();
    await report(node.token, STATE);
    let flushing: Promise<void> | undefined;
    await transaction(t.ctx.db, async (trx) => {
      await trx.selectFrom('nodes').select('name').where('id', '=', node.id).executeTakeFirstOrThrow();
      flushing = t.app.heartbeats.flush();
      // The buffer's write either waits for this transaction or commits now: give it the time to do so.
      await Promise.race([flushing, new Promise((resolve) => setTimeout(resolve, 200))]);
      await trx.updateTable('nodes').set({ name: 'renamed meanwhile' }).where('id', '=', node.id).execute();
    });
    await flushing;
    const after = await t.ctx.db
      .selectFrom('nodes')
      .select(['name', 'last_seen_at'])
      .where('id', '=', node.id)
      .executeTakeFirstOrThrow();
    expect(after.name).toBe('renamed meanwhile');
    expect(Number(after.last_seen_at)).toBeGreaterThan(Number(before.last_seen_at));
  });

  it('keeps liveness right when a node reports to two API processes', async () => {
    const node = await registered('two-processes');
    await report(node.token, STATE, other.app);
    const first = Number((await stored(node.id)).last_seen_at);
    await tick();
    await report(node.token, STATE, t.app);
    await tick();
    await report(node.token, STATE, other.app);
    // The older time is written last: the newer one stays.
    await other.app.heartbeats.flush();
    const newest = Number((await stored(node.id)).last_seen_at);
    expect(newest).toBeGreaterThan(first);
    await t.app.heartbeats.flush();
    expect(Number((await stored(node.id)).last_seen_at)).toBe(newest);

    const timeoutMs = t.config.nodeHeartbeatTimeoutS * 1_000;
    const justInTime = { ...t.ctx, clock: { now: () => newest + timeoutMs + HEARTBEAT_FLUSH_MS } };
    await sweepSilentNodes(justInTime, 0);
    expect((await stored(node.id)).node_state).toBe('ALIVE');
  });
});

// A report without a body and without a Content-Type, in each framing a client may use: nothing said,
// a zero length, or a chunked body that ends at once (streaming clients; Node's `http.request` after
// `flushHeaders()`), which Fastify hands to the parsers rather than straight to the route.
const BODYLESS_FRAMINGS: [string, Record<string, string>][] = [
  ['no length', {}],
  ['a zero length', { 'content-length': '0' }],
  ['a chunked body that ends at once', { 'transfer-encoding': 'chunked' }],
  // Whatever the type: curl -d '' and urllib's data=b"" say a form over an empty body.
  ['an empty form body', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' }],
  ['an empty text/plain body', { 'content-type': 'text/plain' }],
  [
    'a chunked text/plain body that ends at once',
    { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' },
  ],
];

function reportWithoutBody(token: string, framing: Record<string, string>) {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/agent/report',
    headers: { 'x-node-token': token, ...framing },
  });
}

async function stateChanges(id: string) {
  return (await eventsOfNode(t.ctx.db, id))
    .filter((event) => event.type === 'NODE_STATE_CHANGE')
    .map((event) => `${event.previous_state} → ${event.current_state}`);
}

describe('a report without a body is a heartbeat', () => {
  it.each(BODYLESS_FRAMINGS)('makes a NEW node ALIVE as {} does, with %s', async (label, framing) => {
    const node = await registered(`new, ${label}`);
    const res = await reportWithoutBody(node.token, framing);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
    expect((await stored(node.id)).node_state).toBe('ALIVE');
    expect(await stateChanges(node.id)).toEqual(['NEW → ALIVE']);
  });

  it.each(BODYLESS_FRAMINGS)('is a repeat from an ALIVE node, with %s', async (label, framing) => {
    const node = await registered(`alive, ${label}`);
    await report(node.token, STATE);
    const before = await stored(node.id);
    const events = (await eventsOfNode(t.ctx.db, node.id)).length;
    await tick();

    const res = await reportWithoutBody(node.token, framing);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
    expect(await stored(node.id)).toEqual(before);

    await t.app.heartbeats.flush();
    const after = await stored(node.id);
    expect(Number(after.last_seen_at)).toBeGreaterThan(Number(before.last_seen_at));
    expect(after.sequence).toBe(before.sequence);
    expect((await eventsOfNode(t.ctx.db, node.id)).length).toBe(events);
  });

  it.each([
    ['a text/plain body', { 'content-type': 'text/plain' }, '{}'],
    ['a form body', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1'],
    ['a chunked text/plain body', { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, '{}'],
    ['a body without a Content-Type', {}, '{}'],
    ['a chunked body without a Content-Type', { 'transfer-encoding': 'chunked' }, '{}'],
  ])('still refuses %s with 415, and stores nothing', async (label, headers, payload) => {
    const node = await registered(`refused, ${label}`);
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/agent/report',
      headers: { 'x-node-token': node.token, ...headers },
      payload,
    });
    expect(res.statusCode, res.body).toBe(415);
    expect(res.json()).toMatchObject({ statusCode: 415, errorCode: 'UNSUPPORTED_MEDIA_TYPE' });
    expect((await stored(node.id)).node_state).toBe('NEW');
  });
});

/** `curl -X POST -d <data>` with the node's token, as a shell script sends it. */
const curlPost = (url: string, data: string, token: string) =>
  run('curl', ['-s', '-X', 'POST', '-d', data, '-H', `X-NODE-TOKEN: ${token}`, url]);

describe("a shell script's heartbeat", () => {
  it("is taken from curl -d '' and from Python's urllib with data=b'', as they send it", async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/api/v1/agent/report`;
    const byCurl = await registered('heartbeat by curl');
    const curl = await curlPost(url, '', byCurl.token);
    expect(JSON.parse(curl.stdout)).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
    const byPython = await registered('heartbeat by urllib');
    const script = [
      'import sys, urllib.request',
      'request = urllib.request.Request(sys.argv[1], data=b"", headers={"X-NODE-TOKEN": sys.argv[2]})',
      'print(urllib.request.urlopen(request).read().decode())',
    ].join('\n');
    const python = await run('python3', ['-c', script, url, byPython.token]);
    expect(JSON.parse(python.stdout)).toEqual({ node_state: 'ALIVE', report_interval_s: 30 });
    for (const node of [byCurl, byPython]) expect((await stored(node.id)).node_state).toBe('ALIVE');
    // A form with something in it is still no report.
    const form = await registered('a form by curl');
    const refused = await curlPost(url, 'a=1', form.token);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      statusCode: 415,
      errorCode: 'UNSUPPORTED_MEDIA_TYPE',
    });
    expect((await stored(form.id)).node_state).toBe('NEW');
  });
});
