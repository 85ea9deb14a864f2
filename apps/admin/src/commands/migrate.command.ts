import { AppConfig } from '@kernel/config';
import { dataSourceOptions, migrateLocked } from '@kernel/database';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Command } from '@kernel/cli';

const DUPLICATE_DATABASE = '42P04';
const INVALID_CATALOG = '3D000';
const pgCode = (err: unknown) => (err as { code?: string }).code;
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates the database of DATABASE_DIRECT_URL (DATABASE_URL by default) when it does not exist yet, through the server's
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

async function migrate(config: AppConfig, revert: boolean): Promise<string[]> {
  // Migrations and their lock need a session: the direct connection, never a transaction-mode pooler.
  const ds = new DataSource(dataSourceOptions(config, 'admin-migrate', [], true));
  await ds.initialize();
  try {
    return await migrateLocked(ds, config.databaseDirectUrl, revert);
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
      const created = await ensureDatabase(config.databaseDirectUrl);
      const names = await migrate(config, revert);
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
