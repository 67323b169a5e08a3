import type { FastifyReply } from 'fastify';

type Serialized = ReturnType<FastifyReply['serialize']>;

const serialized = new WeakMap<object, Serialized>();

/**
 * Sends a cached answer object, serializing it through the route's response schema only the first
 * time that very object is sent (the allow-list still applies). Meant for values held by a cache,
 * whose identity changes whenever their content does.
 */
export function sendSerializedOnce(reply: FastifyReply, value: object): FastifyReply {
  let json = serialized.get(value);
  if (json === undefined) {
    json = reply.serialize(value);
    serialized.set(value, json);
  }
  return reply.type('application/json').send(json);
}
