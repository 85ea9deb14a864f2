import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { freePort } from './private-servers';

const ROOT = resolve(__dirname, '../..');
const BUILT = {
  api: join(ROOT, 'dist/apps/api/src/main.js'),
  worker: join(ROOT, 'dist/apps/worker/src/main.js'),
  admin: join(ROOT, 'dist/apps/admin/src/main.js'),
};

/** Every process started here, killed when the test process exits (a spec that timed out never reaches afterAll). */
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((p) => p.kill('SIGKILL')));

function built(kind: keyof typeof BUILT): string {
  if (!existsSync(BUILT[kind])) throw new Error(`${BUILT[kind]} is missing: run npm run build first`);
  return BUILT[kind];
}

/**
 * The environment a built process gets: the test run's, with `env` over it. The test process's
 * NODE_TLS_REJECT_UNAUTHORIZED=0 (it trusts the api's self-signed certificate) is not passed on:
 * the processes verify certificates as in production (NODE_EXTRA_CA_CERTS for a test CA).
 */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete out.NODE_TLS_REJECT_UNAUTHORIZED;
  return out;
}

/** An api or worker started from dist as its own process (`npm run start:api` / `start:worker`). */
export class BuiltProcess {
  private out = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    /** `https://127.0.0.1:PORT` for an api, `http://127.0.0.1:PORT` (health) for a worker. */
    readonly url: string,
  ) {
    child.stdout!.on('data', (d) => (this.out += d));
    child.stderr!.on('data', (d) => (this.out += d));
    this.exited = new Promise((r) => child.once('exit', (code, signal) => (running.delete(child), r({ code, signal }))));
  }

  /** Starts the process; resolves once it is spawned (see ready()). */
  static async start(kind: 'api' | 'worker', name: string, env: Record<string, string>): Promise<BuiltProcess> {
    const port = await freePort();
    // Each api also gets a free metrics port: two on one machine cannot share METRICS_PORT's default.
    const own: Record<string, string> =
      kind === 'api' ? { PORT: String(port), METRICS_PORT: '0', HOST: '127.0.0.1' } : { WORKER_HEALTH_PORT: String(port), HOST: '127.0.0.1' };
    const child = spawn(process.execPath, [built(kind)], { cwd: ROOT, env: childEnv({ ...env, ...own }), stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    return new BuiltProcess(name, child, `${kind === 'api' ? 'https' : 'http'}://127.0.0.1:${port}`);
  }

  get output(): string {
    return this.out;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when `/health/ready` answers 200; fails if the process exits or is not ready in time. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.alive) throw new Error(`${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before it was ready:\n${this.out}`);
      const ok = await fetch(`${this.url}/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${this.name} not ready within ${timeoutMs} ms:\n${this.out}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Sends `signal` and waits for the exit; SIGTERM falls back to SIGKILL after `graceMs`. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.alive) this.child.kill(signal);
    const timer = setTimeout(() => this.alive && this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Runs the built admin CLI with `--json` and answers what it printed. */
export function admin<T = Record<string, unknown>>(args: string[], env: Record<string, string>): Promise<T> {
  return new Promise((ok, fail) =>
    execFile(process.execPath, [built('admin'), ...args, '--json'], { cwd: ROOT, env: childEnv(env), timeout: 60_000 }, (err, stdout, stderr) =>
      err ? fail(new Error(`admin ${args.join(' ')}: ${err.message}\n${stderr}`)) : ok(JSON.parse(stdout) as T),
    ),
  );
}
