import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/harness.js';

// The access log: one line per answered request, at info (debug for the health checks and agents'
// reports), as LOG_REQUESTS says.

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}
const INFO = 30;

/** The access lines of the request that answered with this X-Request-Id. */
function linesOf(t: TestApp, requestId: string): Line[] {
  return t.logs
    .map((text) => JSON.parse(text) as Line)
    .filter((line) => line.reqId === requestId && /request/.test(line.msg));
}

async function answered(t: TestApp, method: 'GET' | 'POST', url: string, status: number) {
  const requestId = `log-${Math.random().toString(36).slice(2)}`;
  const response = await t.request(method, url, { headers: { 'x-request-id': requestId } });
  expect(response.status).toBe(status);
  return linesOf(t, requestId);
}

describe.each([['all'], ['errors'], ['none']] as const)('LOG_REQUESTS=%s', (logging) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ background: false, env: { LOG_REQUESTS: logging } });
  });
  afterAll(() => t.close());

  it('logs an answered request in one line, at info, when it says so', async () => {
    const lines = await answered(t, 'GET', '/api/v2/role', 200);
    if (logging !== 'all') return expect(lines).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: INFO,
      msg: 'request completed',
      req: { method: 'GET', url: '/api/v2/role' },
      res: { statusCode: 200 },
    });
    expect(lines[0]!.responseTime).toBeGreaterThanOrEqual(0);
  });

  it('logs an answer of 400 and over unless it says none', async () => {
    const lines = await answered(t, 'GET', '/api/v1/node/not-a-node', 404);
    if (logging === 'none') return expect(lines).toEqual([]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: INFO, res: { statusCode: 404 } });
  });

  it("logs the health checks' and agents' answers at debug only", async () => {
    expect(await answered(t, 'GET', '/healthz', 200)).toEqual([]);
    // Without its node token an agent's report is an error, and is logged as one.
    const refused = await answered(t, 'POST', '/api/v1/agent/report', 401);
    expect(refused).toHaveLength(logging === 'none' ? 0 : 1);
  });
});
