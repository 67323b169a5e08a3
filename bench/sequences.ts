import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { startChallengeEndpoint } from './lib/challenge-endpoint.js';
import type { BenchCertificates } from './lib/tls.js';
import type { StartedTarget, TargetName } from './targets.js';

/**
 * A latency measurement made of sequential calls, each timed on its own, beside a floor: the same
 * exchange without the service, timed the same way in the same run.
 */
export interface Sequence {
  name: string;
  target: TargetName;
  run(target: StartedTarget, options: SequenceOptions): Promise<SequenceResult>;
  goals: {
    /** Measured median minus floor median, at most this. */
    maxMedianOverheadMs: number;
  };
}

export interface SequenceOptions {
  calls: number;
  certificates: BenchCertificates;
}

export interface TimedSeries {
  label: string;
  /** One duration per call, in ms. */
  durationsMs: number[];
}

export interface SequenceResult {
  measured: TimedSeries;
  floor: TimedSeries;
}

async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await call();
  return { value, ms: performance.now() - started };
}

/** Untimed rounds first, so neither side is measured while its code is still being compiled. */
export const WARM_UP_CALLS = 20;

async function verifyAgainstFloor(
  target: StartedTarget,
  { calls, certificates }: SequenceOptions,
): Promise<SequenceResult> {
  const api = target.api;
  if (api === undefined) throw new Error('the verify sequence needs the service target');
  // Chosen here, so the endpoint can compute the real answer.
  const secret = randomBytes(32).toString('base64url');
  const endpoint = await startChallengeEndpoint(certificates, secret);
  const direct = new Agent({ connect: { ca: certificates.ca } });
  const webhook = await api.call<{ id: string }>('POST', '/api/v1/webhook', {
    name: 'bench verify',
    url: endpoint.url,
    secret,
  });

  const verifyOnce = async () => {
    const { value, ms } = await timed(() =>
      api.call<{ status: string; message: string }>('POST', `/api/v1/webhook/${webhook.id}/verify`),
    );
    if (value.status !== 'SUCCESS') throw new Error(`verify answered ${value.status}: ${value.message}`);
    // Enabled now; an edit disables it again, ready for the next verification. Not timed.
    await api.call('PUT', `/api/v1/webhook/${webhook.id}`, { name: 'bench verify' });
    return ms;
  };
  const floorOnce = async () => {
    const url = new URL(endpoint.url);
    url.searchParams.set('challenge', randomBytes(32).toString('base64url'));
    const { value, ms } = await timed(async () => {
      const response = await request(url, {
        dispatcher: direct,
        headers: { 'x-service-timestamp': String(Date.now()) },
      });
      await response.body.json();
      return response.statusCode;
    });
    if (value !== 200) throw new Error(`the endpoint answered ${value} to a direct call`);
    return ms;
  };

  const measured: number[] = [];
  const floor: number[] = [];
  try {
    for (let call = 0; call < WARM_UP_CALLS + calls; call += 1) {
      // Interleaved, so a neighbour's burst of work falls on both series rather than on one.
      const floorMs = await floorOnce();
      const verifyMs = await verifyOnce();
      if (call < WARM_UP_CALLS) continue;
      floor.push(floorMs);
      measured.push(verifyMs);
    }
    const expected = 2 * (WARM_UP_CALLS + calls);
    if (endpoint.answered() !== expected) {
      throw new Error(`the endpoint answered ${endpoint.answered()} challenges, expected ${expected}`);
    }
  } finally {
    // The list scenario's user may hold only 3 webhooks: this one goes before the load scenarios start.
    await api.call('DELETE', `/api/v1/user/webhook/${webhook.id}`);
    await direct.close();
    await endpoint.close();
  }
  return {
    measured: { label: 'POST /api/v1/webhook/{id}/verify', durationsMs: measured },
    floor: { label: 'floor: undici GET of the endpoint', durationsMs: floor },
  };
}

export const SEQUENCES: Sequence[] = [
  {
    name: 'webhook verify',
    target: 'service',
    run: verifyAgainstFloor,
    goals: { maxMedianOverheadMs: 5 },
  },
];
