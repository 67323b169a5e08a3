import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { badRequest } from './errors.js';

function findNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = findNul(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      const item: unknown = (value as Record<string, unknown>)[key];
      const found = findNul(key, path) ?? findNul(item, path === '' ? key : `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function nulError(part: string, field: string) {
  return badRequest(`Invalid ${part}: ${field === '' ? 'a value' : `"${field}"`} contains a NUL character.`, [
    { field, message: 'contains a NUL character' },
  ]);
}

/**
 * PostgreSQL text cannot hold NUL, and no field of this API needs it: refuse it everywhere, once,
 * before validation, instead of letting the database turn it into a 500. Synchronous, as it runs
 * on every request.
 */
export function rejectNulCharacters(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const inPath = findNul(request.params, '');
  if (inPath !== undefined) return done(nulError('path', inPath));
  const inQuery = findNul(request.query, '');
  if (inQuery !== undefined) return done(nulError('query string', inQuery));
  const inBody = findNul(request.body, '');
  if (inBody !== undefined) return done(nulError('body', inBody));
  done();
}
