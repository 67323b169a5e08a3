import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/observability/logger.js';

describe('redactUrl', () => {
  it.each([
    ['/api/v1/user/verify-email?token=abc', '/api/v1/user/verify-email?token=[redacted]'],
    ['/x?TOKEN=abc&keep=1', '/x?TOKEN=[redacted]&keep=1'],
    ['/x?%74oken=abc', '/x?%74oken=[redacted]'],
    ['/x?%54%4F%4B%45%4E=abc', '/x?%54%4F%4B%45%4E=[redacted]'],
    ['/x?api%5Fkey=abc', '/x?api%5Fkey=[redacted]'],
    ['/x?keep=1&challenge=abc&token=def#frag', '/x?keep=1&challenge=[redacted]&token=[redacted]#frag'],
    ['/x?token', '/x?token'],
    ['/x?tokens=abc&my_token=def', '/x?tokens=abc&my_token=def'],
    ['/x?%E0%A4%A=abc&token=def', '/x?%E0%A4%A=abc&token=[redacted]'],
    ['/x', '/x'],
    ['/x?', '/x?'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
