import { defineConfig } from 'vitest/config';

// Every test file runs once per database: SQLite always, PostgreSQL when TEST_DATABASE_URL is set.
const postgresUrl = process.env.TEST_DATABASE_URL;
if (postgresUrl === undefined && process.env.EDGEWATCH_PG_NOTICE !== 'shown') {
  process.env.EDGEWATCH_PG_NOTICE = 'shown';
  console.log('PostgreSQL suite skipped: TEST_DATABASE_URL is not set (CI sets it; see README).');
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true as const, test: { name: 'sqlite', env: { TEST_DB: 'sqlite' } } },
      ...(postgresUrl === undefined
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                env: { TEST_DB: 'postgres' },
                globalSetup: ['./test/support/postgres-global-setup.ts'],
              },
            },
          ]),
    ],
  },
});
