import globalSetup from './global-setup';
import { startPgBouncer } from './pgbouncer';

/**
 * The e2e-pgbouncer project (jest.config.js): the test database as for e2e, and a real PgBouncer
 * in transaction mode in front of it; env-pgbouncer.ts then points each spec's DATABASE_URL at it.
 */
export default async function pgbouncerGlobalSetup(): Promise<void> {
  await globalSetup();
  const bouncer = await startPgBouncer({ serverUrl: process.env.TEST_DATABASE_SERVER_URL! });
  (globalThis as { pgbouncer?: typeof bouncer }).pgbouncer = bouncer;
  process.env.TEST_PGBOUNCER_URL = bouncer.url(process.env.TEST_DATABASE_NAME!);
}
