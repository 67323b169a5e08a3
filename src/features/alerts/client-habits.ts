import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * The published client sends `channel_type: null, channel_id: null` for e-mail alerts and may write the
 * channel type in upper case, as answers show it (docs/rules/alerts-and-fleet.md#channels). Before
 * validation, a null channel field becomes an absent one and the channel type is lower-cased, so the schema
 * and the rules see one form.
 */
export function acceptClientChannelForms(
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const body = request.body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    for (const name of ['channel_type', 'channel_id']) {
      if (fields[name] === null) delete fields[name];
    }
    if (typeof fields.channel_type === 'string') fields.channel_type = fields.channel_type.toLowerCase();
  }
  done();
}
