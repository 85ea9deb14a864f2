import { deleteRedisPrefix, dropDatabase } from './test-db';

/** Once per jest process, like the setup (the e2e-pgbouncer project's teardown calls it too). */
export default async function globalTeardown(): Promise<void> {
  const done = globalThis as { testDatabaseReady?: boolean };
  if (done.testDatabaseReady === false) return;
  done.testDatabaseReady = false;
  const server = process.env.TEST_DATABASE_SERVER_URL;
  const name = process.env.TEST_DATABASE_NAME;
  if (server && name && !process.env.KEEP_TEST_DATABASE) await dropDatabase(server, name);
  await deleteRedisPrefix(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', process.env.REDIS_PREFIX!);
}
