import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PermanentJobFailure } from '../src/jobs/outcomes.js';
import { deferred, testWorker } from './support/jobs-fixture.js';
import { startTestApp, type TestApp } from './support/harness.js';
import { scrape as scrapeMetrics, valueOf } from './support/metrics.js';

let t: TestApp;
beforeAll(async () => {
  // No background worker: its periodic jobs would be due now and then, and this file is about its own.
  t = await startTestApp({ background: false });
});
afterAll(async () => {
  await t.close();
});

const scrape = () => scrapeMetrics(t);

describe('job metrics on /metrics', () => {
  it('shows runs by outcome, their durations, jobs by kind and state, and the oldest due job', async () => {
    const { ctx } = t;
    let flakyRuns = 0;
    const started = deferred();
    const gate = deferred();
    const { worker } = testWorker({
      db: ctx.db,
      queue: ctx.jobs,
      clock: ctx.clock,
      metrics: ctx.jobMetrics,
      pollMs: 60_000,
      handlers: [
        { kind: 'test.ok', handle: async () => undefined },
        {
          kind: 'test.flaky',
          async handle() {
            flakyRuns += 1;
            throw new Error('not yet');
          },
        },
        {
          kind: 'test.perm',
          async handle() {
            throw new PermanentJobFailure('never');
          },
        },
        {
          kind: 'test.busy',
          async handle() {
            started.resolve();
            await gate.promise;
          },
        },
      ],
    });
    const now = ctx.clock.now();
    await ctx.jobs.enqueueMany(ctx.db, [
      { kind: 'test.ok', payload: 1 },
      { kind: 'test.ok', payload: 2 },
      { kind: 'test.ok', payload: 3 },
      { kind: 'test.flaky', payload: null },
      { kind: 'test.perm', payload: null },
      { kind: 'test.later', payload: null, options: { runAt: now + 3_600_000 } },
      { kind: 'test.later', payload: null, options: { runAt: now + 7_200_000 } },
      { kind: 'test.waiting', payload: null, options: { runAt: now - 5_000 } },
    ]);
    expect(await worker.runDue()).toBe(5);
    expect(flakyRuns).toBe(1);

    await worker.start();
    try {
      await ctx.jobs.enqueue(ctx.db, 'test.busy', null);
      await started.promise;
      const samples = await scrape();

      expect(valueOf(samples, 'edgewatch_job_runs_total', { kind: 'test.ok', outcome: 'succeeded' })).toBe(3);
      expect(valueOf(samples, 'edgewatch_job_runs_total', { kind: 'test.flaky', outcome: 'retried' })).toBe(
        1,
      );
      expect(valueOf(samples, 'edgewatch_job_runs_total', { kind: 'test.perm', outcome: 'dead' })).toBe(1);
      expect(
        valueOf(samples, 'edgewatch_job_runs_total', { kind: 'test.ok', outcome: 'dead' }),
      ).toBeUndefined();

      expect(valueOf(samples, 'edgewatch_job_run_duration_seconds_count', { kind: 'test.ok' })).toBe(3);
      expect(valueOf(samples, 'edgewatch_job_run_duration_seconds_count', { kind: 'test.perm' })).toBe(1);
      expect(
        valueOf(samples, 'edgewatch_job_run_duration_seconds_bucket', { kind: 'test.ok', le: '+Inf' }),
      ).toBe(3);
      expect(valueOf(samples, 'edgewatch_job_run_duration_seconds_sum', { kind: 'test.ok' })).toBeGreaterThan(
        0,
      );

      const jobsGauge = (kind: string, state: string) => valueOf(samples, 'edgewatch_jobs', { kind, state });
      expect(jobsGauge('test.later', 'scheduled')).toBe(2);
      expect(jobsGauge('test.flaky', 'scheduled')).toBe(1);
      expect(jobsGauge('test.perm', 'dead')).toBe(1);
      expect(jobsGauge('test.waiting', 'due')).toBe(1);
      expect(jobsGauge('test.busy', 'running')).toBe(1);
      // Successes leave the table, so they are no longer counted.
      expect(samples.filter((s) => s.name === 'edgewatch_jobs' && s.labels.kind === 'test.ok')).toEqual([]);

      const oldest = valueOf(samples, 'edgewatch_jobs_oldest_due_age_seconds');
      expect(oldest).toBeGreaterThanOrEqual(5);
      expect(oldest).toBeLessThan(60);
    } finally {
      gate.resolve();
      await worker.stop(1_000);
    }

    // Read at each scrape: the finished run is gone from the gauge.
    const after = await scrape();
    expect(valueOf(after, 'edgewatch_jobs', { kind: 'test.busy', state: 'running' })).toBeUndefined();
    expect(valueOf(after, 'edgewatch_job_runs_total', { kind: 'test.busy', outcome: 'succeeded' })).toBe(1);
  });

  it('reports no waiting when no job is due', async () => {
    await t.ctx.db.deleteFrom('jobs').where('kind', '=', 'test.waiting').execute();
    const samples = await scrape();
    expect(valueOf(samples, 'edgewatch_jobs_oldest_due_age_seconds')).toBe(0);
  });
});
