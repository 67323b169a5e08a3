import type { FastifyRequest } from 'fastify';
import { tooManyRequests, unauthorized } from '../../../http/errors.js';
import { responses } from '../../../http/schemas.js';
import type { App } from '../../../http/types.js';
import { sha256Hex } from '../../../lib/tokens.js';
import { nodeByTokenHash } from '../nodes/repo.js';
import { ReportBody, ReportAnswer } from './schemas.js';
import { receiveReport, type ReportingNode } from './service.js';

const REPORTS_PER_SECOND = 10;

/** The node behind an X-NODE-TOKEN, or 401. A user's API key does not work here. */
async function authenticateNode(request: FastifyRequest): Promise<ReportingNode> {
  const header = request.headers['x-node-token'];
  const token = Array.isArray(header) ? header[0] : header;
  if (token === undefined || token === '') {
    throw unauthorized("A node token is required: send the node's token in the X-NODE-TOKEN header.");
  }
  const node = await nodeByTokenHash(request.server.ctx.db, sha256Hex(token));
  if (node === undefined) throw unauthorized('The node token is unknown or has been replaced.');
  return node;
}

export async function reportRoutes(app: App): Promise<void> {
  // At most REPORTS_PER_SECOND per node and process: a runaway agent cannot take the service's time.
  const recent = new Map<string, number[]>();
  const admit = (nodeId: string, now: number) => {
    const times = (recent.get(nodeId) ?? []).filter((at) => now - at < 1_000);
    if (times.length >= REPORTS_PER_SECOND) {
      throw tooManyRequests(`More than ${REPORTS_PER_SECOND} reports a second from this node.`, 1);
    }
    times.push(now);
    recent.delete(nodeId);
    recent.set(nodeId, times);
    if (recent.size > 100_000) recent.delete(recent.keys().next().value as string);
  };
  const nodeOf = new WeakMap<FastifyRequest, ReportingNode>();

  app.post(
    '/api/v1/agent/report',
    {
      config: { public: true },
      schema: {
        tags: ['fleet'],
        summary: "A node's agent reports its state (X-NODE-TOKEN, not X-API-KEY)",
        description:
          'The node becomes ALIVE; each change of its addresses, upgrade status, tunnels and services is stored ' +
          'as an event with the new state. Bad input → 400 and nothing stored; more than 10 reports a second from ' +
          'one node → 429 with Retry-After.',
        security: [{ nodeToken: [] }],
        body: ReportBody,
        response: responses({ 200: ReportAnswer }, [400, 401, 413, 415, 429]),
      },
      onRequest: async (request) => {
        const node = await authenticateNode(request);
        admit(node.id, Date.now());
        nodeOf.set(request, node);
      },
      preValidation: (request, _reply, done) => {
        if (request.body === undefined) request.body = {};
        done();
      },
    },
    async (request) => {
      const node = nodeOf.get(request);
      if (node === undefined) throw unauthorized('A node token is required.');
      return receiveReport(request.server.ctx, request.server.heartbeats, node, request.body);
    },
  );
}
