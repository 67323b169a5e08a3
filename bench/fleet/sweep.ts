// The liveness sweep (src/features/fleet/liveness/sweep.ts) timed alone on the fleet's database, after the
// servers have stopped, on the real clock. Every node reported within the last pass, well inside the timeout,
// so a sweep finds no silent node; for the runs with silent nodes, the next n ALIVE nodes first get a last
// report older than the timeout by a minute, more than any allowance the sweep may make for reports still on
// their way.
import type { AppContext } from '../../src/context.js';
import { sweepSilentNodes } from '../../src/features/fleet/liveness/sweep.js';
import { aliveNodes } from './database.js';

export interface SweepRun {
  ms: number;
  turned: number;
}

export interface SweepResult {
  aliveBefore: number;
  quiet: SweepRun[];
  silent: SweepRun[];
  /** Silent nodes each run of `silent` was set up to find. */
  silentPerRun: number;
}

const timeoutMs = (ctx: AppContext) => ctx.config.nodeHeartbeatTimeoutS * 1_000;

/** The first `count` ALIVE nodes by id fall silent; those of earlier runs are UNREACHABLE by now. */
async function silence(ctx: AppContext, count: number): Promise<void> {
  await ctx.db
    .updateTable('nodes')
    .set({ last_seen_at: ctx.clock.now() - timeoutMs(ctx) - 60_000 })
    .where('id', 'in', (eb) =>
      eb.selectFrom('nodes').select('id').where('node_state', '=', 'ALIVE').orderBy('id').limit(count),
    )
    .execute();
}

async function timeOne(ctx: AppContext): Promise<SweepRun> {
  const started = performance.now();
  // Judging began long ago: the sweep does its full work instead of waiting out a restart.
  const turned = await sweepSilentNodes(ctx, ctx.clock.now() - 2 * timeoutMs(ctx));
  return { ms: performance.now() - started, turned };
}

export async function timeSweeps(ctx: AppContext, runs: number, silentPercent: number): Promise<SweepResult> {
  const aliveBefore = await aliveNodes(ctx);
  // Once untimed: the first query on a connection prepares its statements.
  await timeOne(ctx);
  const quiet: SweepRun[] = [];
  for (let run = 0; run < runs; run += 1) quiet.push(await timeOne(ctx));

  const silentPerRun = Math.max(1, Math.round((aliveBefore * silentPercent) / 100));
  const silent: SweepRun[] = [];
  for (let run = 0; run < runs; run += 1) {
    await silence(ctx, silentPerRun);
    silent.push(await timeOne(ctx));
  }
  return { aliveBefore, quiet, silent, silentPerRun };
}
