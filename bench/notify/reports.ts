// Agents' reports to the service, each one a state change: at a steady rate (open loop: report k is sent at
// t0 + k / rate whatever the answers) for the latency, or as fast as the service answers them (closed loop, a
// fixed number in flight) for the throughput.
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { nodeToken } from './seed.js';

const REPORT_PATH = '/api/v1/agent/report';

export class ReportSender {
  private readonly pool: Pool;
  failed = 0;
  firstFailure: string | undefined;

  constructor(baseUrl: string, connections: number) {
    this.pool = new Pool(baseUrl, { connections, pipelining: 1 });
  }

  /** Sends node i's report; false (and counted) when it was not answered 2xx. */
  async send(node: number, body: string): Promise<boolean> {
    try {
      const response = await this.pool.request({
        method: 'POST',
        path: REPORT_PATH,
        headers: { 'content-type': 'application/json', 'x-node-token': nodeToken(node) },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode >= 200 && response.statusCode < 300) return true;
      this.firstFailure ??= `${response.statusCode}: ${text.slice(0, 300)}`;
    } catch (error) {
      this.firstFailure ??= error instanceof Error ? error.message : String(error);
    }
    this.failed += 1;
    return false;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Sends one report per node at `ratePerSecond`; returns when each was sent (performance.now()). */
export async function sendPaced(
  sender: ReportSender,
  nodes: readonly number[],
  body: string,
  ratePerSecond: number,
): Promise<number[]> {
  const sentAt: number[] = [];
  const answers: Promise<boolean>[] = [];
  const start = performance.now();
  for (const [k, node] of nodes.entries()) {
    const wait = start + (k * 1000) / ratePerSecond - performance.now();
    if (wait > 0) await sleep(wait);
    sentAt.push(performance.now());
    answers.push(sender.send(node, body));
  }
  await Promise.all(answers);
  return sentAt;
}

export interface Burst {
  /** When the first report was sent and the last one answered (performance.now()). */
  startedAt: number;
  answeredAt: number;
}

/** Sends one report per node, `inFlight` at a time, each lane sending its next when the last is answered. */
export async function sendBurst(
  sender: ReportSender,
  nodes: readonly number[],
  body: string,
  inFlight: number,
): Promise<Burst> {
  let next = 0;
  const lane = async () => {
    while (next < nodes.length) {
      const node = nodes[next];
      next += 1;
      if (node !== undefined) await sender.send(node, body);
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, nodes.length) }, lane));
  return { startedAt, answeredAt: performance.now() };
}
