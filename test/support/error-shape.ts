import { expect } from 'vitest';
import type { TestResponse } from './harness.js';

const ERROR_KEYS = ['statusCode', 'errorCode', 'message', 'details'];

/** The contract's error answer: the status, `{statusCode, errorCode, message, details?}` and nothing more. */
export function expectError(res: TestResponse, status: number, errorCode: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toBe('application/json');
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

/** One row of a bad-input table: what is sent, and the error it must get. */
export interface BadInputCase {
  name: string;
  status: number;
  errorCode: string;
  body?: unknown;
  payload?: string;
  headers?: Record<string, string>;
  /** The field the error's details must name. */
  field?: string;
}

export const JSON_CONTENT_TYPE = { 'content-type': 'application/json' };

/** The request options that send a bad-input row as written. */
export function badInputRequest(input: BadInputCase) {
  return {
    ...(input.body === undefined ? {} : { body: input.body }),
    ...(input.payload === undefined ? {} : { payload: input.payload }),
    ...(input.headers === undefined ? {} : { headers: input.headers }),
  };
}

/** The error a bad-input row must get, with its field named in the details when the row names one. */
export function expectBadInputError(res: TestResponse, input: BadInputCase): void {
  expectError(res, input.status, input.errorCode);
  if (input.field !== undefined) {
    expect(res.body.details.map((detail: { field: string }) => detail.field)).toContain(input.field);
  }
}
