// Agents' reports to the service (POST /api/v1/agent/report with the node's X-NODE-TOKEN) over undici pools of
// kept-alive connections, one pool per API process, taken in turn.
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

type Report = { node: number; body: string };
type Plan = (k: number) => Report;

export class ReportSender {
  private readonly pools: Pool[];
  failed = 0;
  firstFailure: string | undefined;

  constructor(
    baseUrls: string[],
    private readonly token: (node: number) => string,
    connections: number,
  ) {
    this.pools = baseUrls.map((url) => new Pool(url, { connections, pipelining: 1 }));
  }

  /** Report k goes to API process k mod n; resolves with the status (0: no answer). */
  async send(k: number, { node, body }: Report): Promise<number> {
    const headers = { 'content-type': 'application/json', 'x-node-token': this.token(node) };
    const request = { method: 'POST' as const, path: '/api/v1/agent/report', headers, body };
    try {
      const response = await this.pools[k % this.pools.length]!.request(request);
      if (response.statusCode >= 200 && response.statusCode < 300) await response.body.dump();
      else this.fail(`${response.statusCode}: ${(await response.body.text()).slice(0, 300)}`);
      return response.statusCode;
    } catch (error) {
      this.fail(String(error));
      return 0;
    }
  }

  private fail(why: string) {
    this.failed += 1;
    this.firstFailure ??= why;
  }

  close = () => Promise.all(this.pools.map((pool) => pool.close()));
}

/** Reports 0 … count − 1, `inFlight` at a time; when the first was sent and the last answered. */
export async function sendBurst(sender: ReportSender, count: number, plan: Plan, inFlight: number) {
  let next = 0;
  const lane = async () => {
    for (let k = next++; k < count; k = next++) await sender.send(k, plan(k));
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, lane));
  return { startedAt, answeredAt: performance.now() };
}

type Pacing = { start?: number; maxWaiting?: number; drainMs?: number; hold?: (waiting: number) => boolean };

/**
 * Open loop: report k is sent when it is due (`start` + k / rate) whatever the earlier answers, as independent
 * agents send them, so a service that falls behind shows in the latency instead of slowing the sender down. A
 * report due while `maxWaiting` are unanswered is not sent: the service has fallen too far behind; while
 * `hold` says so, the next report waits (and goes late) instead. Returns when each was sent, and when each was
 * answered 2xx (NaN when it was not, or was not sent).
 */
export async function sendPaced(to: ReportSender, count: number, plan: Plan, rate: number, o: Pacing = {}) {
  const { start = performance.now(), maxWaiting = Infinity, drainMs = 30_000 } = o;
  const [sentAt, answeredAt] = [new Float64Array(count).fill(NaN), new Float64Array(count).fill(NaN)];
  const waiting = new Set<Promise<void>>();
  for (let k = 0; k < count; k += 1) {
    // A timer wakes at most once a millisecond: each wake sends every report due by then.
    const wait = start + (k * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    while (o.hold?.(waiting.size)) await sleep(5);
    if (waiting.size >= maxWaiting) continue;
    const report = plan(k);
    sentAt[k] = performance.now();
    const answer = to.send(k, report).then((status) => {
      if (status >= 200 && status < 300) answeredAt[k] = performance.now();
      waiting.delete(answer);
    });
    waiting.add(answer);
  }
  await Promise.race([Promise.all(waiting), sleep(drainMs, undefined, { ref: false })]);
  return { sentAt, answeredAt };
}
