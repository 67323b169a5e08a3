import { performance } from 'node:perf_hooks';
import type { SimulatedAgent } from './agent.js';
import { pause, Waker } from './bounded.js';
import { jsonOf, RequestFailed, type Answer, type EdgewatchClient } from './client.js';
import type { RunStats } from './stats.js';

/** Tries of one report answered 429, each after the Retry-After the service asked for. */
const MAX_TRIES = 3;
/** How long reports still under way may finish once the run stops. */
const DRAIN_MS = 5_000;

export interface LoopSettings {
  client: EdgewatchClient;
  agents: readonly SimulatedAgent[];
  intervalMs: number;
  concurrency: number;
  stats: RunStats;
  /** The first accepted answer's report_interval_s, once. */
  onServiceInterval?: (seconds: number) => void;
  signal: AbortSignal;
}

function retryAfterMs(answer: Answer): number {
  const header = answer.headers['retry-after'];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 60) * 1_000 : 1_000;
}

/**
 * Each agent reports once per interval, the agents' turns spread evenly over it (agent i at i/N of the
 * interval), with at most `concurrency` reports under way. A turn whose agent is still busy with its
 * previous report (or that the loop reaches more than an interval late) is missed, not made up later.
 * Resolves once the signal aborts and the reports under way have ended (or DRAIN_MS has passed).
 */
export async function reportLoop(settings: LoopSettings): Promise<void> {
  const { client, agents, intervalMs, concurrency, stats, signal } = settings;
  const slotMs = intervalMs / agents.length;
  const waker = new Waker();
  const running = new Set<Promise<void>>();
  let serviceIntervalSeen = settings.onServiceInterval === undefined;

  const send = async (agent: SimulatedAgent) => {
    const body = agent.nextReport();
    for (let tries = 1; ; tries++) {
      let answer: Answer;
      try {
        answer = await client.report(agent.token, body);
      } catch (error) {
        if (!(error instanceof RequestFailed)) throw error;
        stats.failed(error.kind);
        return;
      }
      if (answer.status === 200) {
        stats.accepted(answer.ms);
        agent.accepted();
        if (!serviceIntervalSeen) {
          serviceIntervalSeen = true;
          settings.onServiceInterval?.(jsonOf<{ report_interval_s: number }>(answer).report_interval_s);
        }
        return;
      }
      stats.failed(`HTTP ${answer.status}`);
      if (answer.status !== 429 || tries >= MAX_TRIES || signal.aborted) return;
      await pause(retryAfterMs(answer), signal);
      if (signal.aborted) return;
    }
  };

  const start = (agent: SimulatedAgent) => {
    agent.busy = true;
    const report = send(agent)
      .catch(() => stats.failed('simulator'))
      .finally(() => {
        agent.busy = false;
        running.delete(report);
        waker.wake();
      });
    running.add(report);
  };

  const startedAt = performance.now();
  let turn = 0;
  while (!signal.aborted) {
    let due = startedAt + turn * slotMs;
    const now = performance.now();
    while (due <= now && running.size < concurrency) {
      const agent = agents[turn % agents.length] as SimulatedAgent;
      if (agent.busy || now - due > intervalMs) stats.missed++;
      else start(agent);
      turn++;
      due = startedAt + turn * slotMs;
    }
    // Until the next turn is due, or, when every slot is taken, until a report ends.
    await waker.wait(running.size >= concurrency ? intervalMs : due - performance.now(), signal);
  }

  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(running),
    new Promise((resolve) => (timer = setTimeout(resolve, DRAIN_MS))),
  ]);
  clearTimeout(timer);
}
