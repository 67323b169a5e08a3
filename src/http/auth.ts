import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, ServiceContext } from '../context.js';
import { authenticate } from '../features/apikeys/service.js';
import type { Permission } from '../features/roles/catalog.js';
import { AppError, forbidden, unauthorized } from './errors.js';

type AuthHook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The onRequest hook of a route that needs `permission`, run before body parsing: the key decides
 * 401, the key's roles decide 403. Ownership (404) is the services' business. Each route gets its
 * own, so the permission is fixed when the route is registered rather than looked up per request.
 */
export function requirePermission(permission: Permission): AuthHook {
  return async (request) => {
    const key = presentedKey(request);
    const actor = await authenticate(request.server.ctx, key);
    if (actor === undefined) throw unauthorized('The API key is unknown or has been revoked.');
    request.actor = actor;
    requireGranted(actor, permission);
  };
}

const TOKEN_SCHEME = /^X_AUTH_TOKEN(?:[ \t]+(.*))?$/i;

/**
 * The key a request presents (docs/rules/api.md#authentication): in `X-API-KEY`, or as the published
 * client's `Authorization: X_AUTH_TOKEN <key>`. An empty value is no value; two different keys are a 401.
 */
export function presentedKey(request: FastifyRequest): string {
  const apiKey = firstValue(request.headers['x-api-key'])?.trim() ?? '';
  const authorization = firstValue(request.headers.authorization)?.trim() ?? '';
  const token = TOKEN_SCHEME.exec(authorization)?.[1]?.trim() ?? '';
  if (apiKey !== '' && token !== '' && apiKey !== token) {
    throw unauthorized('X-API-KEY and Authorization: X_AUTH_TOKEN name two different keys: send one.');
  }
  const key = apiKey === '' ? token : apiKey;
  if (key === '') {
    throw unauthorized(
      'An API key is required: send it in the X-API-KEY header (or as Authorization: X_AUTH_TOKEN <key>).',
    );
  }
  return key;
}

function firstValue(header: string | string[] | undefined): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

/** 403 unless the actor's roles grant `permission`: for a permission a request's parameters call for. */
export function requireGranted(actor: Actor, permission: Permission): void {
  if (!actor.permissions.has(permission)) {
    throw forbidden(`Your roles do not allow this operation (it needs the "${permission}" permission).`);
  }
}

/** The service context of an authenticated request. */
export function contextOf(request: FastifyRequest): ServiceContext {
  const actor = request.actor;
  if (actor === undefined) throw new AppError(500, 'Route is missing its permission declaration.');
  return { ...request.server.ctx, actor };
}
