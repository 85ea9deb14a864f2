import { AppConfig } from '@app/config';
import { dataSourceOptions } from '@app/database';
import { Client } from 'pg';
import { DataSource, MigrationExecutor } from 'typeorm';
import { Command } from './command';

const DUPLICATE_DATABASE = '42P04';
const INVALID_CATALOG = '3D000';
const pgCode = (err: unknown) => (err as { code?: string }).code;
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates the database of DATABASE_URL when it does not exist yet, through the server's
 * `postgres` database. Connecting to the target first means an existing database never needs
 * access to `postgres` (managed servers often refuse it).
 */
export async function ensureDatabase(url: string): Promise<string | null> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!name || name === 'postgres') return null;
  const probe = new Client({ connectionString: url });
  try {
    await probe.connect();
    return null;
  } catch (err) {
    if (pgCode(err) !== INVALID_CATALOG) throw err;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const admin = new Client({ connectionString: maintenance.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${quoteIdent(name)}`);
    return name;
  } catch (err) {
    if (pgCode(err) === DUPLICATE_DATABASE) return null; // another migrate run made it meanwhile
    throw err;
  } finally {
    await admin.end();
  }
}

/** Holds a session advisory lock while `fn` runs, so two migrate runs never interleave. */
async function withMigrationLock<T>(url: string, fn: () => Promise<T>): Promise<T> {
  const lock = new Client({ connectionString: url, application_name: 'admin-migrate-lock' });
  await lock.connect();
  try {
    await lock.query(`SELECT pg_advisory_lock(hashtext('integrations:migrations'))`);
    return await fn();
  } finally {
    await lock.end(); // ending the session releases the lock
  }
}

async function migrate(config: AppConfig, revert: boolean): Promise<string[]> {
  const ds = new DataSource(dataSourceOptions(config, 'admin-migrate'));
  await ds.initialize();
  try {
    if (!revert) return (await ds.runMigrations()).map((m) => m.name);
    const executor = new MigrationExecutor(ds);
    const before = await executor.getExecutedMigrations();
    await ds.undoLastMigration();
    const after = new Set((await executor.getExecutedMigrations()).map((m) => m.name));
    return before.filter((m) => !after.has(m.name)).map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}

/** Runs without the Nest context: the tables the services need may not exist yet. */
export const MIGRATE_COMMANDS: Command[] = [
  {
    words: ['migrate'],
    usage: '[--revert]',
    summary: 'create the database if missing, then apply pending migrations (or revert the last one)',
    options: ['revert'],
    arity: 0,
    async run({ args, config }) {
      const revert = args.has('revert');
      const created = await ensureDatabase(config.databaseUrl);
      const names = await withMigrationLock(config.databaseUrl, () => migrate(config, revert));
      const verb = revert ? 'reverted' : 'applied';
      return {
        json: revert ? { reverted: names } : { applied: names },
        text: [
          ...(created ? [`database ${created} created`] : []),
          names.length ? `${verb}: ${names.join(', ')}` : revert ? 'nothing to revert' : 'nothing to apply: the database is up to date',
        ],
      };
    },
  },
];
