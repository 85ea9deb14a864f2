import 'reflect-metadata';
import { AppConfig } from '@kernel/config';
import { dataSourceOptions } from '@kernel/database';
import { DataSource } from 'typeorm';
import { recreateDatabase, withDatabase } from './test-db';

// Plain JS, shared with `npm test`'s first step (it runs before the build).
const { testServicesProblem } = require('../../scripts/test-services') as { testServicesProblem: () => Promise<string | null> };

const done = globalThis as { testDatabaseReady?: boolean };

/**
 * One database and one Redis key prefix per test run (so parallel runs on one machine do not
 * meet), migrated once with the real migrations. Once per jest process: the e2e-pgbouncer project's
 * setup calls it too, and jest runs every selected project's setup in the same process.
 */
export default async function globalSetup(): Promise<void> {
  if (done.testDatabaseReady) return;
  await prepareTestRun();
  done.testDatabaseReady = true;
}

/** The setup itself, every time it is called (test/test-services.e2e-spec.ts calls it with servers that are not there). */
export async function prepareTestRun(): Promise<void> {
  const problem = await testServicesProblem();
  if (problem) throw new Error(problem);
  const server = process.env.TEST_DATABASE_SERVER_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `integrations_test_${process.pid}`;
  await recreateDatabase(server, name);
  process.env.DATABASE_URL = withDatabase(server, name);
  process.env.TEST_DATABASE_NAME = name;
  process.env.TEST_DATABASE_SERVER_URL = server;
  process.env.REDIS_PREFIX = `iatest${process.pid}`;
  process.env.DATA_DIR = process.env.DATA_DIR ?? '.data/test';
  process.env.NODE_ENV = 'test';
  // The test process trusts the api's self-signed certificate (set here, in the real process
  // environment, so Node's fetch sees it too; jest sandboxes get a copy of process.env).
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
  const ds = new DataSource(dataSourceOptions(AppConfig.fromEnv(), 'test-migrate'));
  await ds.initialize();
  await ds.runMigrations();
  await ds.destroy();
}
