import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Db } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import * as repo from './repo.js';

export interface JobMetrics {
  observeRun(kind: string, outcome: 'succeeded' | 'retried' | 'dead', seconds: number): void;
}

/**
 * Job metrics on the process's registry: runs by outcome and their durations (counted where they run),
 * and, read from the database at each scrape, jobs by kind and state and the age of the oldest due job.
 */
export function registerJobMetrics(registry: Registry, db: Db, clock: Clock): JobMetrics {
  const runs = new Counter({
    name: 'edgewatch_job_runs_total',
    help: 'Job runs in this process, by kind and outcome (succeeded, retried, dead).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'edgewatch_job_run_duration_seconds',
    help: 'How long job runs took in this process, by kind.',
    labelNames: ['kind'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'edgewatch_jobs',
    help: 'Jobs in the queue, by kind and state (due, scheduled, running, dead).',
    labelNames: ['kind', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const row of await repo.countJobs(db, clock.now()))
        this.set({ kind: row.kind, state: row.state }, row.count);
    },
  });
  new Gauge({
    name: 'edgewatch_jobs_oldest_due_age_seconds',
    help: 'How long the longest-waiting due job has waited for a worker (0 when none waits).',
    registers: [registry],
    async collect() {
      this.set((await repo.oldestDueAge(db, clock.now())) / 1000);
    },
  });
  return {
    observeRun(kind, outcome, seconds) {
      runs.inc({ kind, outcome });
      duration.observe({ kind }, seconds);
    },
  };
}
