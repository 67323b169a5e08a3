import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { badRequest } from './errors.js';

/**
 * Where a NUL character is in `value`: the path to it (object keys and array indexes, outermost first; empty
 * for the value itself), or undefined. The path is built only on the way back from a find, as this walks
 * every request's body.
 */
function nulPath(value: unknown): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? [] : undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = nulPath(value[index]);
      if (found !== undefined) return [index, ...found];
    }
    return undefined;
  }
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) {
      // A NUL in a key is reported at the object holding it.
      if (key.includes('\u0000')) return [];
      const found = nulPath((value as Record<string, unknown>)[key]);
      if (found !== undefined) return [key, ...found];
    }
  }
  return undefined;
}

/** A path as the error's field names it: `tunnels[0].name`. */
function fieldName(path: (string | number)[]): string {
  return path.reduce<string>(
    (name, step) => (typeof step === 'number' ? `${name}[${step}]` : name === '' ? step : `${name}.${step}`),
    '',
  );
}

function findNul(value: unknown): string | undefined {
  const path = nulPath(value);
  return path === undefined ? undefined : fieldName(path);
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
  const inPath = findNul(request.params);
  if (inPath !== undefined) return done(nulError('path', inPath));
  const inQuery = findNul(request.query);
  if (inQuery !== undefined) return done(nulError('query string', inQuery));
  const inBody = findNul(request.body);
  if (inBody !== undefined) return done(nulError('body', inBody));
  done();
}
