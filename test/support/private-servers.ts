import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Private Redis and Postgres servers for the outage specs: the shared ones (6379, 5432) serve
 * every helper and test run, so a spec that stops, restarts or flushes a server does it to its
 * own, on a free port, and removes it afterwards.
 */

/** A free TCP port on 127.0.0.1 (for a server of a test's own, or an api whose PUBLIC_BASE_URL names its port). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port, or fails after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = new Socket();
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => (s.destroy(), resolve(false)));
      s.connect(port, '127.0.0.1');
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const exited = (p: ChildProcess): Promise<void> =>
  p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((resolve) => p.once('exit', () => resolve()));

/** Every redis-server started here, killed when the test process exits (a spec that timed out never reaches afterAll). */
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((p) => p.kill('SIGKILL')));

/** A redis-server without persistence: a restart starts it empty, as the outage did. */
export class PrivateRedis {
  private proc?: ChildProcess;
  private constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.resume();
    return redis;
  }

  /** Starts it again (empty) on the same port. */
  async resume(): Promise<void> {
    if (this.proc) return;
    this.proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    running.add(this.proc);
    await waitForPort(this.port);
  }

  /** Stops it for real (SIGKILL: no goodbye to clients, like a crash or a lost container). */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.proc = undefined;
    p.kill('SIGKILL');
    await exited(p);
    running.delete(p);
  }
}

/** The machine's Postgres binaries (Debian's layout, newest version), or PG_BIN_DIR. */
function pgBin(): string {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error(`no Postgres binaries under ${root}: install postgresql or set PG_BIN_DIR`);
  return join(root, versions.sort((a, b) => Number(b) - Number(a))[0], 'bin');
}

const asRoot = process.getuid?.() === 0;

/**
 * A Postgres cluster in a temp dir, run as the `postgres` user when the tests run as root (initdb
 * refuses root), trust authentication, on a free port. `restart()` is a fast shutdown and a start: every connection
 * is cut, as in the outage.
 */
export class PrivatePostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get serverUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<PrivatePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'ia-pg-'));
    if (asRoot) execFileSync('chown', ['postgres', dir]);
    const pg = new PrivatePostgres(await freePort(), dir);
    pg.asPostgres('initdb', ['-D', pg.data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await pg.resume();
    return pg;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  async resume(): Promise<void> {
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c fsync=off`;
    this.asPostgres('pg_ctl', ['-D', this.data, '-o', opts, '-l', join(this.dir, 'log'), '-w', 'start']);
    await waitForPort(this.port);
  }

  async stop(): Promise<void> {
    this.asPostgres('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', 'stop']);
  }

  async restart(downMs = 0): Promise<void> {
    await this.stop();
    if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
    await this.resume();
  }

  /** Stops it and removes its files. */
  async remove(): Promise<void> {
    try {
      this.asPostgres('pg_ctl', ['-D', this.data, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private asPostgres(bin: string, args: string[]): void {
    const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(pgBin(), bin), ...args]] : [join(pgBin(), bin), args];
    execFileSync(cmd as string, argv as string[], { stdio: 'ignore', timeout: 60_000 });
  }
}
