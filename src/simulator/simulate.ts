import { performance } from 'node:perf_hooks';
import { SimulatedAgent } from './agent.js';
import { EdgewatchClient } from './client.js';
import type { SimulateOptions } from './options.js';
import { ProgressLine, type ProgressOutput } from './progress.js';
import { prepareNodes } from './registry.js';
import { reportLoop } from './report-loop.js';
import { count, formatElapsed, formatErrors, formatMs, RunStats } from './stats.js';

export { SimulatorError } from './registry.js';

export interface SimulationOutput {
  /** The one-line summary at the end (standard output). */
  out(line: string): void;
  /** Everything else (standard error). */
  progress: ProgressOutput;
}

export interface SimulationSummary {
  nodes: number;
  reused: number;
  registered: number;
  /** Seconds of reporting. */
  seconds: number;
  reports: number;
  errors: Record<string, number>;
  missed: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * `edgewatch simulate`: prepares the nodes (registered or reused), then reports for them until the
 * signal aborts or the duration has passed, with a progress line; ends with a one-line summary.
 * Throws a SimulatorError when it cannot start (service unreachable, key refused).
 */
export async function simulate(
  options: SimulateOptions,
  output: SimulationOutput,
  signal: AbortSignal,
  random: () => number = Math.random,
): Promise<SimulationSummary> {
  const client = new EdgewatchClient(options.url, options.key, options.concurrency);
  try {
    let ready = 0;
    const preparing = new ProgressLine(
      output.progress,
      () => `preparing nodes: ${ready} of ${options.nodes} ready`,
    );
    preparing.start();
    const registration = await prepareNodes(
      client,
      options.url,
      options.nodes,
      options.concurrency,
      (made) => (ready = made),
      signal,
    ).finally(() => preparing.stop());
    const { nodes, reused, registered } = registration;
    const summary: SimulationSummary = {
      nodes: nodes.length,
      reused,
      registered,
      seconds: 0,
      reports: 0,
      errors: {},
      missed: 0,
      p50Ms: NaN,
      p99Ms: NaN,
    };
    if (signal.aborted) {
      output.out(`Stopped before the first report: ${nodes.length} of ${options.nodes} nodes were ready.`);
      return summary;
    }

    output.progress.line(
      `${count(nodes.length, 'node')} ready (${reused} reused with new tokens, ${registered} registered); each reports ` +
        `every ${options.intervalS} s, flap rate ${options.flapRate}, ` +
        (options.durationS === undefined ? 'until Ctrl-C.' : `for ${options.durationS} s.`),
    );

    const agents = nodes.map(
      (node, i) =>
        new SimulatedAgent(
          node,
          nodes.length > 1 ? nodes[(i + 1) % nodes.length] : undefined,
          options.flapRate,
          random,
        ),
    );
    const stop = new AbortController();
    const stopOnSignal = () => stop.abort();
    signal.addEventListener('abort', stopOnSignal, { once: true });
    const startedAt = performance.now();
    const timer =
      options.durationS === undefined ? undefined : setTimeout(stopOnSignal, options.durationS * 1_000);
    const stats = new RunStats(() => performance.now());
    const progress = new ProgressLine(output.progress, () => {
      const window = stats.takeWindow();
      const rate = window.seconds > 0 ? window.reports / window.seconds : 0;
      return [
        formatElapsed((performance.now() - startedAt) / 1_000),
        count(nodes.length, 'node'),
        `${rate.toFixed(1)} reports/s`,
        `errors ${formatErrors(stats.errors)}`,
        `p50 ${formatMs(window.p50)}`,
        `p99 ${formatMs(window.p99)}`,
      ].join('  ');
    });
    progress.start();
    try {
      await reportLoop({
        client,
        agents,
        intervalMs: options.intervalS * 1_000,
        concurrency: options.concurrency,
        stats,
        signal: stop.signal,
        onServiceInterval: (seconds) => {
          if (options.intervalS > seconds) {
            progress.note(
              `Note: the service asks agents to report every ${seconds} s; these report every ` +
                `${options.intervalS} s and may go UNREACHABLE.`,
            );
          }
        },
      });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stopOnSignal);
      progress.stop();
    }

    summary.seconds = (performance.now() - startedAt) / 1_000;
    summary.reports = stats.reports;
    summary.errors = Object.fromEntries(stats.errors);
    summary.missed = stats.missed;
    summary.p50Ms = stats.percentile(0.5);
    summary.p99Ms = stats.percentile(0.99);
    output.out(formatSummary(summary));
    return summary;
  } finally {
    await client.close();
  }
}

export function formatSummary(summary: SimulationSummary): string {
  const rate = summary.seconds > 0 ? summary.reports / summary.seconds : 0;
  return (
    `Simulated ${count(summary.nodes, 'node')} for ${summary.seconds.toFixed(1)} s: ${count(summary.reports, 'report')} ` +
    `(${rate.toFixed(1)}/s), errors ${formatErrors(new Map(Object.entries(summary.errors)))}, ` +
    `${count(summary.missed, 'missed turn')}, latency p50 ${formatMs(summary.p50Ms)}, p99 ${formatMs(summary.p99Ms)}.`
  );
}
