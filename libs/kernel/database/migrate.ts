import { Client } from 'pg';
import { DataSource, MigrationExecutor } from 'typeorm';

/** One key for every process that migrates: the admin CLI's `migrate` and `MIGRATIONS_RUN_ON_START`. */
const MIGRATION_LOCK = 'integrations:migrations';

/**
 * Holds a session advisory lock while `fn` runs, so two migrate runs (two replicas starting
 * together, a replica and the CLI) never interleave; TypeORM takes no lock of its own. The lock
 * is on a connection of its own, outside the pool the migrations use (a pool of one would wait
 * on itself); a crash ends the session and so releases it. `url` must be a direct connection
 * (DATABASE_DIRECT_URL): through a transaction-mode pooler the lock would stay on a server
 * connection handed to whoever comes next, and the unlock-by-ending would never happen.
 */
export async function withMigrationLock<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const lock = new Client({ connectionString: url, application_name: 'integrations-migrate-lock' });
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext($1))`, [MIGRATION_LOCK]);
    return await fn();
  } finally {
    await lock.end(); // ending the session releases the lock
  }
}

/**
 * Applies the pending migrations of `ds` (initialised, on the direct connection), or reverts the
 * last one, under the migration lock; answers the names applied or reverted. The one way anything migrates.
 */
export async function migrateLocked(ds: DataSource, url: string, revert = false): Promise<string[]> {
  return withMigrationLock(url, async () => {
    if (!revert) return (await ds.runMigrations()).map((m) => m.name);
    const executor = new MigrationExecutor(ds);
    const before = await executor.getExecutedMigrations();
    await ds.undoLastMigration();
    const after = new Set((await executor.getExecutedMigrations()).map((m) => m.name));
    return before.filter((m) => !after.has(m.name)).map((m) => m.name);
  });
}
