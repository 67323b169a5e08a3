import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { rejectNulCharacters } from '../src/http/no-nul.js';

/** What the hook answers for a request with these parts: the error's message, or undefined when it passes. */
function messageFor(parts: { params?: unknown; query?: unknown; body?: unknown }): string | undefined {
  let message: string | undefined;
  const request = { params: {}, query: {}, body: undefined, ...parts } as unknown as FastifyRequest;
  rejectNulCharacters(request, {} as FastifyReply, (error?: Error) => (message = error?.message));
  return message;
}

describe('NUL characters', () => {
  it('names the field by its path: keys, then indexes of lists', () => {
    const body = { tunnels: [{ name: 'ok' }, { name: 'bad\u0000' }] };
    expect(messageFor({ body })).toBe('Invalid body: "tunnels[1].name" contains a NUL character.');
    expect(messageFor({ body: ['a', 'b\u0000'] })).toBe('Invalid body: "[1]" contains a NUL character.');
    expect(messageFor({ body: 'x\u0000' })).toBe('Invalid body: a value contains a NUL character.');
    expect(messageFor({ query: { force: '\u0000' } })).toBe(
      'Invalid query string: "force" contains a NUL character.',
    );
  });

  it('reports a key with NUL at the object that holds it', () => {
    const body = { headers: { 'X-\u0000': 'v' } };
    expect(messageFor({ body })).toBe('Invalid body: "headers" contains a NUL character.');
  });

  it('lets through what has none', () => {
    expect(messageFor({ body: { tunnels: [{ name: 'a', peers: [1, null, true] }] } })).toBeUndefined();
  });
});
