import type { Logger } from 'pino';
import type pg from 'pg';
import { dedicatedConnection } from '../db/connect.js';
import type { Db } from '../db/types.js';
import { JOBS_CHANNEL } from './queue.js';

export interface JobListener {
  close(): Promise<void>;
}

const RECONNECT_MS = 1_000;

/**
 * PostgreSQL: LISTEN on the jobs channel over a connection of its own and call `onJobs` with each
 * notification from this schema (several schemas may share one server), the schema taken off (see
 * JobQueue.heard). A lost connection is opened again; until then the workers' poll finds the jobs.
 */
export async function listenForJobs(
  db: Db,
  logger: Logger,
  onJobs: (message: string) => void,
): Promise<JobListener> {
  let client: pg.PoolClient | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const connection = await dedicatedConnection(db);
    if (connection === undefined) return;
    const { rows } = await connection.query<{ schema: string }>('select current_schema() as schema');
    const prefix = `${rows[0]?.schema ?? 'public'}:`;
    connection.on('notification', (message) => {
      if (message.payload?.startsWith(prefix) !== true) return;
      onJobs(message.payload.slice(prefix.length));
    });
    connection.on('error', (error) => {
      logger.warn({ err: error }, 'job notifications lost; reconnecting');
      connection.release(true);
      if (client === connection) client = undefined;
      scheduleReconnect();
    });
    await connection.query(`LISTEN ${JOBS_CHANNEL}`);
    client = connection;
    if (closed) await close();
  };

  const scheduleReconnect = () => {
    if (closed) return;
    retry = setTimeout(() => {
      connect().catch((error: unknown) => {
        logger.warn({ err: error }, 'job notifications unavailable; retrying');
        scheduleReconnect();
      });
    }, RECONNECT_MS);
    retry.unref();
  };

  const close = async (): Promise<void> => {
    closed = true;
    clearTimeout(retry);
    const connection = client;
    client = undefined;
    if (connection === undefined) return;
    try {
      await connection.query(`UNLISTEN ${JOBS_CHANNEL}`);
      connection.release();
    } catch {
      connection.release(true);
    }
  };

  await connect();
  return { close };
}
