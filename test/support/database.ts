import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type Dialect = 'sqlite' | 'postgres';

export const dialect: Dialect = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export interface TestDatabase {
  /** The DATABASE_URL for the service. */
  url: string;
  /** PostgreSQL only: the schema this test file owns. */
  schema?: string;
  dataDir: string;
  drop(): Promise<void>;
}

/** A fresh database for one test file: a new SQLite file, or a new PostgreSQL schema. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'edgewatch-test-'));
  if (dialect === 'sqlite') {
    return {
      url: `sqlite:${path.join(dataDir, 'edgewatch.db')}`,
      dataDir,
      drop: () => fs.rm(dataDir, { recursive: true, force: true }),
    };
  }
  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined) throw new Error('TEST_DB=postgres needs TEST_DATABASE_URL');
  const schema = `ew_test_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `create schema ${schema}`);
  return {
    url,
    schema,
    dataDir,
    drop: async () => {
      await adminQuery(url, `drop schema ${schema} cascade`);
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
