import type { FastifyRequest } from 'fastify';
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
    for (const [key, item] of Object.entries(value)) {
      const found = findNul(key, path) ?? findNul(item, path === '' ? key : `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * PostgreSQL text cannot hold NUL, and no field of this API needs it: refuse it everywhere, once,
 * before validation, instead of letting the database turn it into a 500.
 */
export async function rejectNulCharacters(request: FastifyRequest): Promise<void> {
  for (const [part, value] of [
    ['path', request.params],
    ['query string', request.query],
    ['body', request.body],
  ] as const) {
    const field = findNul(value, '');
    if (field !== undefined) {
      throw badRequest(
        `Invalid ${part}: ${field === '' ? 'a value' : `"${field}"`} contains a NUL character.`,
        [{ field, message: 'contains a NUL character' }],
      );
    }
  }
}
