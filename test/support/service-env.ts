import { randomBytes } from 'node:crypto';
import type { TestDatabase } from './database.js';

/**
 * The DATABASE_URL a separate program (the CLI, a spawned server) uses for a test database. Such a
 * program connects without a schema option, so for PostgreSQL the schema travels in the URL as a
 * connection option (`options=-c search_path=...`), which node-postgres passes to the server.
 */
export function serviceDatabaseUrl(database: TestDatabase): string {
  if (database.schema === undefined) return database.url;
  const url = new URL(database.url);
  url.searchParams.set('options', `-c search_path=${database.schema}`);
  return url.toString();
}

/**
 * The environment the program needs for a test database: its URL, and with PostgreSQL the secret key
 * it requires (with SQLite the program keeps its own key file, as it does by default).
 */
export function serviceEnv(database: TestDatabase): Record<string, string> {
  const url = serviceDatabaseUrl(database);
  if (database.schema === undefined) return { DATABASE_URL: url };
  return { DATABASE_URL: url, SECRET_KEY: randomBytes(32).toString('hex') };
}
