// A complete webhook receiver for edgewatch: node's standard library only.
//   WEBHOOK_SECRET=...  PORT=9443  [TLS_CERT=cert.pem TLS_KEY=key.pem]  node examples/receiver.mjs
// With TLS_CERT/TLS_KEY it serves HTTPS itself; without, it expects a TLS-terminating proxy in front.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('Set WEBHOOK_SECRET to the secret edgewatch returned for the webhook');
const port = Number(process.env.PORT ?? 9443);
const toleranceMs = 5 * 60 * 1000;

// The delivery ids already handled (the newest 10,000), and the newest sequence seen per alert and resource.
const seen = new Set();
const latest = new Map();
const remember = (delivery) => {
  seen.add(delivery);
  if (seen.size > 10_000) seen.delete(seen.values().next().value);
};

const hmacHex = (timestamp, payload) =>
  createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
const sameText = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
// A whsec_ secret's requests also carry the Standard Webhooks headers, keyed with its base64 part decoded.
const standardKey = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : undefined;
const standardSignature = (id, seconds, payload) =>
  `v1,${createHmac('sha256', standardKey).update(`${id}.${seconds}.${payload}`).digest('base64')}`;

/** Whether the request is signed by the secret, by whichever scheme it carries; the reason when not. */
function signatureProblem(headers, raw) {
  const standard = standardKey !== undefined && headers['webhook-signature'] !== undefined;
  const timestamp = String(standard ? headers['webhook-timestamp'] : headers['x-service-timestamp']);
  const timestampMs = standard ? Number(timestamp) * 1000 : Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() - timestampMs) > toleranceMs) {
    return 'stale or missing timestamp';
  }
  if (standard) {
    const expected = standardSignature(String(headers['webhook-id']), timestamp, raw);
    const given = String(headers['webhook-signature']).split(' ');
    return given.some((one) => sameText(one, expected)) ? undefined : 'bad signature';
  }
  // After a secret rotation the header is v1=<new>,<previous> for a while: one of them must match.
  const signature = String(headers['x-service-signature'] ?? '');
  const given = signature.startsWith('v1=') ? signature.slice(3).split(',') : [];
  const expected = hmacHex(timestamp, raw);
  return given.some((one) => sameText(one, expected)) ? undefined : 'bad signature';
}

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function handle(req, res) {
  const url = new URL(req.url, 'https://receiver.invalid');
  const timestamp = req.headers['x-service-timestamp'];

  // 1. Verification: GET ?challenge=... → echo it with the HMAC of "timestamp.challenge".
  if (req.method === 'GET' && url.searchParams.has('challenge')) {
    const challenge = url.searchParams.get('challenge');
    return send(res, 200, { challenge, challenge_response: hmacHex(timestamp, challenge) });
  }

  // 2. Notifications: POST with a signed JSON body. Check before trusting anything in it.
  if (req.method === 'POST') {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const raw = Buffer.concat(chunks).toString('utf8');
    const problem = signatureProblem(req.headers, raw);
    if (problem !== undefined) return send(res, problem === 'bad signature' ? 401 : 400, { error: problem });
    const event = JSON.parse(raw);
    // A delivery may come twice (a retry after a lost answer, a crash): it keeps its id, so skip repeats.
    const delivery = String(req.headers['x-service-delivery'] ?? '');
    if (seen.has(delivery)) return send(res, 200, { received: event.id, duplicate: true });
    remember(delivery);
    // Notifications may arrive out of order: a resource's sequence only grows, so an older one is history.
    const key = `${event.alert?.id}:${event.resource.id}`;
    const stale = (latest.get(key) ?? 0) > event.sequence;
    if (!stale) latest.set(key, event.sequence);
    console.log(
      `${stale ? '(older) ' : ''}${event.type} ${event.current_state}: ${event.message} (delivery ${delivery})`,
    );
    return send(res, 200, { received: event.id });
  }

  send(res, 404, { error: 'not found' });
}

const listener = (req, res) =>
  handle(req, res).catch((error) => {
    console.error(error);
    send(res, 500, { error: 'receiver failed' });
  });

const server =
  process.env.TLS_CERT && process.env.TLS_KEY
    ? https.createServer(
        { cert: readFileSync(process.env.TLS_CERT), key: readFileSync(process.env.TLS_KEY) },
        listener,
      )
    : http.createServer(listener);
server.listen(port, () => console.log(`receiver listening on port ${port}`));
