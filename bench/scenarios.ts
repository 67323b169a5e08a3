import type { AdminApi } from './lib/api.js';
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

function adminApi(target: StartedTarget): AdminApi {
  if (target.api === undefined) throw new Error('this scenario needs the service target');
  return target.api;
}

/** Creates `count` of something through the API, then checks the list the scenario loads holds exactly that. */
async function createListed(
  count: number,
  create: (n: number) => Promise<unknown>,
  listed: () => Promise<unknown[]>,
): Promise<void> {
  for (let n = 1; n <= count; n += 1) await create(n);
  const found = (await listed()).length;
  if (found !== count) throw new Error(`expected ${count} items in the list, found ${found}`);
}

const WEBHOOKS = 3;
const ALERTS = 50;
// All fifty on one page, as the figure has always measured (the default page holds 25).
const ALERT_PAGE = `/api/v2/mysubscriptions?size=${ALERTS}`;

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
  {
    name: `GET /api/v2/webhook, ${WEBHOOKS} webhooks`,
    target: 'service',
    async prepare(target) {
      const api = adminApi(target);
      await createListed(
        WEBHOOKS,
        (n) =>
          api.call('POST', '/api/v1/webhook', { name: `hook ${n}`, url: `https://hooks.example.com/${n}` }),
        () => api.call('GET', '/api/v2/webhook'),
      );
      return { path: '/api/v2/webhook', headers: adminHeaders(target) };
    },
    goals: { minRatio: 0.5 },
  },
  {
    name: `GET /api/v2/mysubscriptions, ${ALERTS} alerts`,
    target: 'service',
    async prepare(target) {
      const api = adminApi(target);
      const { org_id: orgId } = await api.call<{ org_id: string }>('GET', '/api/v1/user/me');
      await createListed(
        ALERTS,
        (n) =>
          api.call('POST', '/api/v1/mysubscriptions', {
            name: `alert ${n}`,
            type: 'NODE_STATE_CHANGE',
            settings: { org_id: orgId, alert_me: 'UNREACHABLE' },
          }),
        async () => (await api.call<{ results: unknown[] }>('GET', ALERT_PAGE)).results,
      );
      return { path: ALERT_PAGE, headers: adminHeaders(target) };
    },
    goals: { minRatio: 0.4, maxP99Ms: 10 },
  },
];
