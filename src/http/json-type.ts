import type { FastifyReply } from 'fastify';

const FRAMEWORK_JSON = 'application/json; charset=utf-8';

/**
 * JSON answers carry `Content-Type: application/json` exactly (docs/rules/api.md#transport): RFC 8259 defines
 * no charset parameter, and the product's published client refuses list answers that have one. Fastify
 * appends `charset=utf-8` to every JSON type it serializes, so the type is set back here, after
 * serialization.
 */
export function plainJsonType(reply: FastifyReply): void {
  if (reply.getHeader('content-type') === FRAMEWORK_JSON)
    void reply.header('content-type', 'application/json');
}
