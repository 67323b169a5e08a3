import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Actor, AppContext } from '../context.js';
import type { HeartbeatBuffer } from '../features/fleet/reports/heartbeats.js';
import type { Permission } from '../features/roles/catalog.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission a route needs. Routes under /api/ must name one; others are public. */
    permission?: Permission;
    /** Marks an /api/ route that is deliberately open (login, the e-mail verification link). */
    public?: true;
  }
  interface FastifyRequest {
    actor: Actor | undefined;
  }
  interface FastifyInstance {
    ctx: AppContext;
    /** Agent reports that change nothing, waiting to be written (features/fleet/reports/heartbeats.ts). */
    heartbeats: HeartbeatBuffer;
  }
}
