const fs = require('node:fs');
const swcrc = JSON.parse(fs.readFileSync(`${__dirname}/.swcrc`, 'utf8'));
// swc rewrites the @app/* aliases itself, which also covers globalSetup (outside the mapper).
swcrc.jsc.baseUrl = __dirname;
const transform = { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] };
const moduleNameMapper = { '^@(kernel|web|features)/([a-z-]+(?:/(?:http|console|worker|cli))?)$': '<rootDir>/libs/$1/$2' };
// The node environment, recording each test's time against its limit (listed at the end of a run).
const common = { rootDir: __dirname, transform, moduleNameMapper, testEnvironment: '<rootDir>/test/support/timed-environment.js' };

/**
 * The core e2e specs the e2e-pgbouncer project runs a second time with DATABASE_URL through a real
 * PgBouncer in transaction mode and DATABASE_DIRECT_URL direct (docs/operations/scale.md, "A connection pooler").
 */
const THROUGH_PGBOUNCER = ['auth', 'cases', 'documents-original-copy', 'idempotency', 'scim-paging', 'scim-users', 'sync', 'webhooks-delivery'];

/** Unit specs sit beside the code; e2e specs in test/ run over real Postgres and Redis. */
module.exports = {
  testTimeout: 30000,
  // The unit layer in parallel even on 2 cores (jest's default leaves one core to the runner, which
  // would run it in band there); `npm test` runs everything with --runInBand regardless.
  maxWorkers: Math.max(2, require('node:os').availableParallelism() - 1),
  // The default reporter's summary (its `Tests:` line is what CI reads) plus a line per finished file.
  reporters: ['default', '<rootDir>/test/support/progress-reporter.js'],
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/env.ts'],
    },
    {
      ...common,
      displayName: 'e2e-pgbouncer',
      testMatch: THROUGH_PGBOUNCER.map((name) => `<rootDir>/test/${name}.e2e-spec.ts`),
      globalSetup: '<rootDir>/test/support/pgbouncer-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/pgbouncer-global-teardown.ts',
      setupFiles: ['<rootDir>/test/support/env.ts', '<rootDir>/test/support/env-pgbouncer.ts'],
    },
  ],
};
