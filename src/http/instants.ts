import { Type } from 'typebox';
import { badRequest } from './errors.js';

/** A time as ISO 8601 or epoch milliseconds, as the published client sends either; 400 otherwise. */
export function instant(
  field: string,
  value: string | undefined,
  part: 'query string' | 'body' = 'query string',
): number | undefined {
  if (value === undefined) return undefined;
  const time = /^\d{1,16}$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(time)) {
    throw badRequest(`Invalid ${part}: "${field}" must be an ISO 8601 time or epoch milliseconds.`, [
      { field, message: 'must be an ISO 8601 time or epoch milliseconds' },
    ]);
  }
  return time;
}

export const InstantQuery = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'ISO 8601, or epoch milliseconds.',
});
