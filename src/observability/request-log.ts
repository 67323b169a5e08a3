import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestLogging } from '../config.js';

/** Routes called so often that their answers log at debug: agents' reports, and the health checks. */
const FREQUENT_ROUTES = new Set(['/api/v1/agent/report', '/healthz', '/readyz']);

/**
 * The access log: one line per answered request, at `info` (`debug` for the frequent routes), as
 * LOG_REQUESTS says: `all`, `errors` (answers of 400 and over) or `none`. A 5xx is logged with its error by
 * the error handler in every case.
 */
export function logAnswered(request: FastifyRequest, reply: FastifyReply, logging: RequestLogging): void {
  const status = reply.statusCode;
  if (logging === 'none' || (logging === 'errors' && status < 400)) return;
  const frequent = status < 400 && FREQUENT_ROUTES.has(request.routeOptions.url ?? '');
  const line = { req: request, res: reply, responseTime: reply.elapsedTime };
  if (frequent) request.log.debug(line, 'request completed');
  else request.log.info(line, 'request completed');
}
