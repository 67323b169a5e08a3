import { Migrator, type Migration } from 'kysely';
import type { Db } from './types.js';
import * as foundation from './migrations/0001_foundation.js';

// Listed here rather than read from disk, so the same code runs from TypeScript sources and from dist/.
const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
};

export interface MigrationReport {
  applied: string[];
}

export async function migrateToLatest(db: Db): Promise<MigrationReport> {
  const migrator = new Migrator({ db, provider: { getMigrations: () => Promise.resolve(migrations) } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const name = failed?.migrationName ?? 'unknown';
    throw new Error(`Migration ${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return { applied: (results ?? []).map((result) => result.migrationName) };
}
