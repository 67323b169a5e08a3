import type { Logger } from 'pino';
import type pg from 'pg';
import { dedicatedConnection } from './connect.js';
import type { Db } from './types.js';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenHandlers {
  /** A notification from this schema, the schema taken off. */
  message(payload: string): void;
  /** Listening (again): from here on every notification is heard. */
  listening?(): void;
  /** The connection was lost: notifications sent until `listening` is called again are not heard. */
  lost?(): void;
}

const RECONNECT_MS = 1_000;

/**
 * PostgreSQL: LISTEN on `channel` over a connection of its own and hand each notification from this schema
 * (several schemas may share one server; payloads are `<schema>:<message>`) to `handlers.message`. A lost
 * connection is opened again. On SQLite there is nothing to listen to: it resolves at once, never calling.
 */
export async function listenOn(
  db: Db,
  channel: string,
  logger: Logger,
  handlers: ListenHandlers,
): Promise<Listener> {
  let client: pg.PoolClient | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const connection = await dedicatedConnection(db);
    if (connection === undefined) return;
    const { rows } = await connection.query<{ schema: string }>('select current_schema() as schema');
    const prefix = `${rows[0]?.schema ?? 'public'}:`;
    connection.on('notification', (message) => {
      if (message.channel !== channel || message.payload?.startsWith(prefix) !== true) return;
      handlers.message(message.payload.slice(prefix.length));
    });
    connection.on('error', (error) => {
      logger.warn({ err: error, channel }, 'notifications lost; reconnecting');
      connection.release(true);
      if (client === connection) {
        client = undefined;
        handlers.lost?.();
      }
      scheduleReconnect();
    });
    await connection.query(`LISTEN ${channel}`);
    client = connection;
    if (closed) return close();
    handlers.listening?.();
  };

  const scheduleReconnect = () => {
    if (closed) return;
    retry = setTimeout(() => {
      connect().catch((error: unknown) => {
        logger.warn({ err: error, channel }, 'notifications unavailable; retrying');
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
      await connection.query(`UNLISTEN ${channel}`);
      connection.release();
    } catch {
      connection.release(true);
    }
  };

  await connect();
  return { close };
}
