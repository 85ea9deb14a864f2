import { AppConfig } from '@kernel/config';
import { dataSourceOptions, isDatabaseUnavailable, migrateLocked } from '@kernel/database';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { Command, UsageError } from '@kernel/cli';

const DUPLICATE_DATABASE = '42P04';
const MAX_WAIT_SECONDS = 600;
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

/**
 * "The server is not up yet", worth another try while `--wait` lasts: what the api answers as a
 * database outage (refused, starting up, too many clients …), a host name not resolvable yet (a
 * compose service still being created) and a network not routing to it yet.
 */
const NOT_THERE_YET = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);
const notUpYet = (err: unknown) => isDatabaseUnavailable(err) || NOT_THERE_YET.has(pgCode(err) ?? '');

function waitSeconds(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds > MAX_WAIT_SECONDS) throw new UsageError(`--wait takes whole seconds from 0 to ${MAX_WAIT_SECONDS}, got "${raw}"`);
  return seconds;
}

/**
 * Connects to the server of `url` until it answers, for at most `seconds`: an orchestrator that
 * starts the database and this step together (podman-compose, which ignores `depends_on`
 * conditions; a Kubernetes Job beside a database pod) then needs no wait of its own. Any other
 * error (a wrong password, say) is answered at once.
 */
export async function waitForServer(url: string, seconds: number, log: (line: string) => void = () => undefined): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let told = false;
  for (;;) {
    const probe = new Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      return;
    } catch (err) {
      if (pgCode(err) === INVALID_CATALOG) return; // the server answers; ensureDatabase makes the database
      if (!notUpYet(err) || Date.now() >= deadline) throw err;
      if (!told) log(`waiting up to ${seconds} s for the database server (${(err as Error).message})`);
      told = true;
    } finally {
      await probe.end().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Runs without the Nest context: the tables the services need may not exist yet. */
export const MIGRATE_COMMANDS: Command[] = [
  {
    words: ['migrate'],
    usage: '[--revert] [--wait <seconds>]',
    summary:
      'create the database if missing, then apply pending migrations (or revert the last one); --wait: first wait up to that long for the database server to answer',
    options: ['revert', 'wait'],
    arity: 0,
    async run({ args, config }) {
      const revert = args.has('revert');
      const wait = waitSeconds(args.option('wait'));
      if (wait > 0) await waitForServer(config.databaseDirectUrl, wait, (line) => process.stderr.write(`${line}\n`));
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
