import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from './private-servers';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

/** Where Debian's `pgbouncer` package puts the program (scripts/test-services.js installs it). */
const PROGRAMS = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'];

export interface PgBouncer {
  port: number;
  /** A URL through the pooler to `database` (same user as the server URL). */
  url(database: string): string;
  /** What the pooler printed (its log), for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The Postgres server it pools (a URL; its database part is ignored): TEST_DATABASE_SERVER_URL. */
  serverUrl: string;
  /** Server connections per (database, user) pair: small, so clients really share them. */
  poolSize?: number;
  /** Seconds a client's query may wait for a server connection before PgBouncer refuses it (its default: 120). */
  queryWaitTimeout?: number;
}

const quoted = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * A real PgBouncer in transaction pooling mode on a free port of 127.0.0.1, in front of the
 * server of `serverUrl`, for every database on it (`* =`). Clients are trusted (auth_type=trust;
 * the user must still be in the auth file); towards Postgres it signs in as the server URL's user.
 * As root it drops to the `postgres` user (PgBouncer refuses to run as root).
 */
export async function startPgBouncer({ serverUrl, poolSize = 4, queryWaitTimeout }: PgBouncerOptions): Promise<PgBouncer> {
  const program = PROGRAMS.find((p) => existsSync(p));
  if (!program) throw new Error('pgbouncer is not installed (apt-get install pgbouncer; scripts/test-services.js does it as root)');
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const password = decodeURIComponent(server.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  chmodSync(dir, 0o755);
  const target = [`host=${server.hostname}`, `port=${server.port || 5432}`, `user=${user}`, ...(password ? [`password=${password}`] : [])].join(' ');
  writeFileSync(join(dir, 'userlist.txt'), `${quoted(user)} ""\n`, { mode: 0o644 });
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = ${target}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `admin_users = ${user}`, // SHOW CLIENTS on the admin console (database "pgbouncer")
      `default_pool_size = ${poolSize}`,
      ...(queryWaitTimeout === undefined ? [] : [`query_wait_timeout = ${queryWaitTimeout}`]),
      'max_client_conn = 1000',
      // LIFO reuse (the default, said here because the pooler spec relies on it): the server
      // connection used last is handed out next.
      'server_round_robin = 0',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const args = [...(process.getuid?.() === 0 ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.on('exit', () => {
      exited = true;
      resolve();
    }),
  );
  child.on('error', (err) => (output += `\n${err.message}`));
  const url = (database: string) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  const stop = async () => {
    if (!exited) child.kill('SIGTERM'); // SIGTERM: immediate shutdown
    await exit;
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready when a query goes through (to the server's `postgres` database, which always exists).
  for (let i = 0; ; i++) {
    if (exited) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer exited at start:\n${output}`);
    }
    const probe = new Client({ connectionString: url('postgres'), connectionTimeoutMillis: 1000 });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.query('SELECT 1');
      break;
    } catch (err) {
      if (i >= 100) {
        await stop();
        throw new Error(`pgbouncer did not answer on port ${port}: ${(err as Error).message}\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      await probe.end().catch(() => undefined);
    }
  }
  return { port, url, log: () => output, stop };
}
