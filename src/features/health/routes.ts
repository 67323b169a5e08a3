import { sql } from 'kysely';
import { Type } from 'typebox';
import type { App } from '../../http/types.js';
import { AppError } from '../../http/errors.js';
import { responses } from '../../http/schemas.js';

const Status = Type.Object({ status: Type.Literal('ok') });

export async function healthRoutes(app: App): Promise<void> {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], summary: 'The process is up', response: responses({ 200: Status }) } },
    () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database answers',
        response: responses({ 200: Status }, [503]),
      },
    },
    async () => {
      try {
        await sql`select 1`.execute(app.ctx.db);
      } catch {
        throw new AppError(503, 'The database does not answer.');
      }
      return { status: 'ok' as const };
    },
  );
}
