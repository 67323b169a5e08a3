import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, headerProblems } from '../src/features/webhooks/rules.js';
import { challengeAnswerProblem, challengeUrl } from '../src/features/webhooks/challenge.js';
import { parseNetworks } from '../src/net/addresses.js';
import { hmacHex, notificationHeaders, signatureHeader } from '../src/features/webhooks/signing.js';
import * as kit from '../src/receiver/index.js';

describe('header rules', () => {
  const printable = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
  const cases: [string, Record<string, string>, boolean][] = [
    ['no headers', {}, true],
    ['three ordinary headers', { 'X-Team': 'ops', Authorization: 'Bearer abc', 'X-Env': 'prod' }, true],
    ['four headers', { a: '1', b: '2', c: '3', d: '4' }, false],
    ['total exactly 2048', { 'X-Big': 'v'.repeat(2048 - 5) }, true],
    ['total 2049', { 'X-Big': 'v'.repeat(2048 - 4) }, false],
    ['name with a space', { 'X Team': 'ops' }, false],
    ['name with a colon', { 'X-Team:': 'ops' }, false],
    ['empty name', { '': 'ops' }, false],
    ['value with CR', { 'X-Team': 'ops\rInjected: 1' }, false],
    ['value with LF', { 'X-Team': 'ops\nInjected: 1' }, false],
    ['value with NUL', { 'X-Team': 'ops\u0000' }, false],
    ['value with a control character', { 'X-A': '\u0001' }, false],
    ['value with DEL', { 'X-A': 'a\u007f' }, false],
    ['value with a non-ASCII character', { 'X-A': '€' }, false],
    ['value with a Latin-1 letter', { 'X-A': 'é' }, false],
    ['value with spaces, a tab and every printable ASCII character', { 'X-A': ` \t${printable}` }, true],
    ['empty value', { 'X-A': '' }, true],
    ['Upgrade', { Upgrade: 'websocket' }, false],
    ['Keep-Alive', { 'Keep-Alive': 'x' }, false],
    ['Expect', { Expect: '100-continue' }, false],
    ['TE', { TE: 'trailers' }, false],
    ['Trailer', { Trailer: 'X-A' }, false],
    ['Proxy-Connection', { 'proxy-connection': 'keep-alive' }, false],
    ['Host', { Host: 'evil.example' }, false],
    ['content-length lower case', { 'content-length': '5' }, false],
    ['Content-Type', { 'Content-Type': 'text/plain' }, false],
    ['Transfer-Encoding', { 'Transfer-Encoding': 'chunked' }, false],
    ['Connection', { Connection: 'close' }, false],
    ['User-Agent', { 'USER-AGENT': 'me' }, false],
    ['X-Service-Signature', { 'X-Service-Signature': 'v1=00' }, false],
    ['x-service-anything', { 'x-service-custom': '1' }, false],
    ['webhook-id', { 'Webhook-Id': '1' }, false],
    ['same name twice in other case', { 'X-A': '1', 'x-a': '2' }, false],
    ['token punctuation allowed', { "X-Odd!#$%&'*+.^_`|~": '1' }, true],
  ];
  it.each(cases)('%s', (_name, headers, ok) => {
    expect(headerProblems(headers).length === 0).toBe(ok);
  });

  it('says which characters a value may hold', () => {
    expect(headerProblems({ 'X-A': 'caf\u00e9' })).toEqual([
      { field: 'Header.X-A', message: expect.stringMatching(/printable ASCII/) },
    ]);
  });

  it('reports every broken rule at once', () => {
    const problems = headerProblems({ Host: 'x', 'Bad Name': 'y', 'X-A': 'a\nb', 'X-B': '' });
    expect(problems.length).toBeGreaterThanOrEqual(4);
  });
});

describe('URL rules', () => {
  const allowed = parseNetworks(['10.1.0.0/16']);
  const cases: [string, 'ok' | 400 | 422][] = [
    ['https://hooks.example.com/edge', 'ok'],
    ['https://hooks.example.com:8443/edge?x=1', 'ok'],
    ['https://8.8.8.8/hook', 'ok'],
    ['https://[2606:4700:4700::1111]/hook', 'ok'],
    ['https://10.1.2.3/hook', 'ok'],
    ['http://hooks.example.com/edge', 400],
    ['ftp://hooks.example.com/edge', 400],
    ['hooks.example.com/edge', 400],
    ['https://user:pass@hooks.example.com/', 400],
    ['https://user@hooks.example.com/', 400],
    ['not a url', 400],
    ['https://127.0.0.1/hook', 422],
    ['https://2130706433/hook', 422],
    ['https://0x7f.0.0.1/hook', 422],
    ['https://[::1]/hook', 422],
    ['https://[::ffff:127.0.0.1]/hook', 422],
    ['https://192.168.1.10/hook', 422],
    ['https://169.254.169.254/latest/meta-data', 422],
    ['https://100.64.0.1/hook', 422],
    ['https://[fd00::1]/hook', 422],
    ['https://0.0.0.0/hook', 422],
    ['https://10.2.0.1/hook', 422],
  ];
  it.each(cases)('%s → %s', (url, expected) => {
    const verdict = checkWebhookUrl(url, allowed);
    expect(verdict.ok ? 'ok' : verdict.status).toBe(expected);
  });
});

describe('HMAC construction', () => {
  // Fixed vectors, also printed in docs/notifications.md.
  const secret = 'whsec-example-0123456789abcdef';
  const timestamp = '1767225600000';
  const challenge = '3q2-7wEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

  it('matches the documented challenge vector', () => {
    expect(hmacHex(secret, timestamp, challenge)).toBe(
      'f00ef18eb34d1780aa8ec4d6f0ed1e42c5bdf9d90572c7f31685116edfae465c',
    );
    expect(kit.answerChallenge(secret, timestamp, challenge).challenge_response).toBe(
      hmacHex(secret, timestamp, challenge),
    );
  });

  it('matches the documented notification signature', () => {
    const doc = fs.readFileSync(new URL('../docs/notifications.md', import.meta.url), 'utf8');
    const body = /```text\n(\{.*\})\n```/.exec(doc)?.[1] ?? '';
    expect(body).not.toBe('');
    const header = signatureHeader(secret, timestamp, body);
    expect(header).toBe('v1=8381be23959137729f305d0926eff756da8e2e570052a6f738271ce1d1db2080');
    expect(doc).toContain(`X-Service-Signature: ${header}`);
    expect(
      kit.verifySignature(secret, { body, timestamp, signature: header }, { now: Number(timestamp) }),
    ).toEqual({ ok: true });
  });

  it('matches the documented Standard Webhooks signature, as the standardwebhooks package signs it', () => {
    const doc = fs.readFileSync(new URL('../docs/notifications.md', import.meta.url), 'utf8');
    const body = /```text\n(\{.*\})\n```/.exec(doc)?.[1] ?? '';
    const standardSecret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    const deliveryId = '01940a6e-0000-7000-8000-0000000000d1';
    const headers = notificationHeaders({}, { secret: standardSecret, timestamp, deliveryId, body });
    expect(headers).toMatchObject({ 'webhook-id': deliveryId, 'webhook-timestamp': '1767225600' });
    expect(doc).toContain(`webhook-signature: ${headers['webhook-signature']}`);
    const library = new Webhook(standardSecret);
    expect(library.sign(deliveryId, new Date(Number(timestamp)), body)).toBe(headers['webhook-signature']);
    expect(notificationHeaders({}, { secret, timestamp, deliveryId, body })).not.toHaveProperty('webhook-id');
  });

  it('agrees with an independent implementation (openssl) on random inputs', () => {
    for (const [key, ts, payload] of [
      ['k'.repeat(16), '1', 'x'],
      ['secret with ~!@#$%^&*()', '1767225600123', '{"unicode":"héllo ✓"}'],
    ] as const) {
      const out = execFileSync('openssl', ['dgst', '-sha256', '-hmac', key], {
        input: `${ts}.${payload}`,
      }).toString();
      expect(out.trim().split(' ').at(-1)).toBe(hmacHex(key, ts, payload));
      expect(kit.hmacHex(key, ts, payload)).toBe(hmacHex(key, ts, payload));
    }
  });

  it('refuses wrong signatures, stale timestamps and tampered bodies', () => {
    const body = '{"a":1}';
    const signature = signatureHeader(secret, timestamp, body);
    const now = Number(timestamp);
    expect(kit.verifySignature(secret, { body: '{"a":2}', timestamp, signature }, { now }).ok).toBe(false);
    expect(kit.verifySignature('other-secret-000000', { body, timestamp, signature }, { now }).ok).toBe(
      false,
    );
    expect(kit.verifySignature(secret, { body, timestamp, signature }, { now: now + 600_000 })).toEqual({
      ok: false,
      reason: 'timestamp too far from now',
    });
    expect(kit.verifySignature(secret, { body, timestamp: undefined, signature }, { now }).ok).toBe(false);
    expect(kit.verifySignature(secret, { body, timestamp, signature: signature.slice(3) }, { now }).ok).toBe(
      false,
    );
    expect(
      kit.verifyChallengeResponse(secret, timestamp, challenge, hmacHex(secret, timestamp, challenge)),
    ).toBe(true);
    expect(kit.verifyChallengeResponse(secret, timestamp, challenge, 'f'.repeat(64))).toBe(false);
  });
});

describe('challenge URL', () => {
  const cases: [string, string][] = [
    ['https://h.example/hook', 'https://h.example/hook?challenge=C'],
    ['https://h.example/hook?', 'https://h.example/hook?challenge=C'],
    ['https://h.example/hook?a=b%20c&flag', 'https://h.example/hook?a=b%20c&flag&challenge=C'],
    [
      'https://h.example/hook?x=1+2&y=%2B&challenge=old',
      'https://h.example/hook?x=1+2&y=%2B&challenge=old&challenge=C',
    ],
    ['https://h.example/hook?a=1#part', 'https://h.example/hook?a=1&challenge=C#part'],
  ];
  it.each(cases)('%s → %s', (url, expected) => {
    expect(challengeUrl(url, 'C')).toBe(expected);
  });

  it('encodes the challenge value', () => {
    expect(challengeUrl('https://h.example/', 'a b&c')).toBe('https://h.example/?challenge=a%20b%26c');
  });
});

describe('challenge answer judgement', () => {
  const expected = { secret: 's'.repeat(20), timestamp: '1700000000000', challenge: 'c'.repeat(43) };
  const right = hmacHex(expected.secret, expected.timestamp, expected.challenge);
  const answer = (status: number, body: string, truncated = false) => ({
    status,
    body: Buffer.from(body),
    truncated,
  });

  const cases: [string, ReturnType<typeof answer>, RegExp | undefined][] = [
    [
      'right',
      answer(200, JSON.stringify({ challenge: expected.challenge, challenge_response: right })),
      undefined,
    ],
    ['status 500', answer(500, '{}'), /status 500/],
    ['status 204', answer(204, ''), /status 204/],
    ['not JSON', answer(200, 'hello'), /not JSON/],
    ['JSON array', answer(200, '[]'), /not an object/],
    ['no challenge', answer(200, JSON.stringify({ challenge_response: right })), /no "challenge"/],
    [
      'other challenge',
      answer(200, JSON.stringify({ challenge: 'x', challenge_response: right })),
      /differs/,
    ],
    [
      'no response',
      answer(200, JSON.stringify({ challenge: expected.challenge })),
      /no "challenge_response"/,
    ],
    [
      'wrong response',
      answer(200, JSON.stringify({ challenge: expected.challenge, challenge_response: 'ab' })),
      /is wrong/,
    ],
    [
      'upper-case hex',
      answer(200, JSON.stringify({ challenge: expected.challenge, challenge_response: right.toUpperCase() })),
      /is wrong/,
    ],
    ['too large', answer(200, '{', true), /64 KiB/],
  ];
  it.each(cases)('%s', (_name, response, problem) => {
    const result = challengeAnswerProblem(response, expected);
    if (problem === undefined) expect(result).toBeUndefined();
    else expect(result).toMatch(problem);
  });
});

describe('receiver kit documentation', () => {
  it('shows examples/receiver.mjs exactly as it is', () => {
    const doc = fs.readFileSync(new URL('../docs/receiving-webhooks.md', import.meta.url), 'utf8');
    const example = fs.readFileSync(new URL('../examples/receiver.mjs', import.meta.url), 'utf8');
    expect(doc).toContain(example.trimEnd());
  });
});
