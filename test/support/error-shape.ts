import { expect } from 'vitest';
import type { TestResponse } from './harness.js';

const ERROR_KEYS = ['statusCode', 'errorCode', 'message', 'details'];

/** The contract's error answer: the status, `{statusCode, errorCode, message, details?}` and nothing more. */
export function expectError(res: TestResponse, status: number, errorCode: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ statusCode: status, errorCode });
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message.length).toBeGreaterThan(5);
  expect(Object.keys(res.body).filter((key) => !ERROR_KEYS.includes(key))).toEqual([]);
  if (res.body.details !== undefined) {
    for (const detail of res.body.details) {
      expect(Object.keys(detail).sort()).toEqual(['field', 'message']);
    }
  }
}
