import type { LoadRequest } from './lib/load.js';
import type { StartedTarget, TargetName } from './targets.js';

export interface Scenario {
  name: string;
  target: TargetName;
  /** The scenario every other one's throughput is divided by; exactly one has it. */
  reference?: true;
  /** Runs once against the started target (create data, fetch keys) and returns the request to repeat. */
  prepare(target: StartedTarget): Promise<LoadRequest> | LoadRequest;
  goals?: {
    /** Throughput at least this fraction of the reference scenario's. */
    minRatio?: number;
    maxP99Ms?: number;
  };
}

function adminHeaders(target: StartedTarget): Record<string, string> {
  if (target.adminKey === undefined) throw new Error('this scenario needs the service target');
  return { 'x-api-key': target.adminKey };
}

// Targets run in the order they first appear here; each is started once for all of its scenarios.
export const SCENARIOS: Scenario[] = [
  {
    name: 'baseline: bare Fastify, constant JSON',
    target: 'baseline',
    reference: true,
    prepare: () => ({ path: '/api/v2/role' }),
  },
  {
    name: 'GET /api/v2/role, authenticated',
    target: 'service',
    prepare: (target) => ({ path: '/api/v2/role', headers: adminHeaders(target) }),
    goals: { minRatio: 0.5, maxP99Ms: 5 },
  },
];
