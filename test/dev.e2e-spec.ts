import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const DEV = resolve(__dirname, '../scripts', process.env.DEV_SCRIPT ?? 'dev.js');

const listen = () =>
  new Promise<Server>((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => done(s));
  });
const portOf = (s: Server) => (s.address() as { port: number }).port;
const closedPort = async () => {
  const s = await listen();
  const port = portOf(s);
  await new Promise((r) => s.close(r));
  return port;
};

/** `node scripts/dev.js` in a directory holding `dotEnv` as its .env; never the shared servers. */
function runDev(dotEnv: string, env: Record<string, string>, timeoutMs = 30_000) {
  const cwd = mkdtempSync(join(tmpdir(), 'dev-env-'));
  writeFileSync(join(cwd, '.env'), dotEnv);
  const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd, DATA_DIR: join(cwd, '.data') };
  const started = Date.now();
  const child = spawn(process.execPath, [DEV], { cwd, env: { ...base, ...env } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  return new Promise<{ code: number | null; output: string; ms: number }>((done) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      done({ code, output, ms: Date.now() - started });
    });
  });
}

describe('npm run dev reads .env (the one loader every process uses)', () => {
  it('honours PORT from .env: a busy PORT there is the port it refuses', async () => {
    const busy = await listen();
    const closed = await closedPort();
    try {
      // Real variables point at closed ports, so a dev that ignored .env stops there, touching nothing.
      const { code, output } = await runDev(`PORT=${portOf(busy)}\n`, {
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/x`,
        REDIS_URL: `redis://127.0.0.1:${closed}`,
      });
      expect(output).toContain(`port ${portOf(busy)} is already in use`);
      expect(code).not.toBe(0);
    } finally {
      busy.close();
    }
  });

  it('the real environment wins over .env', async () => {
    const busy = await listen();
    const closed = await closedPort();
    try {
      const { output } = await runDev(`PORT=${closed}\n`, {
        PORT: String(portOf(busy)),
        DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/x`,
        REDIS_URL: `redis://127.0.0.1:${closed}`,
      });
      expect(output).toContain(`port ${portOf(busy)} is already in use`);
    } finally {
      busy.close();
    }
  });
});

describe('npm run dev with DATABASE_URL / REDIS_URL set to servers that do not answer', () => {
  it('refuses at once, naming what to unset (from the environment) to get the embedded one', async () => {
    const closed = await closedPort();
    const busy = await listen(); // PORT and WORKER_HEALTH_PORT free, so the refusal is the database's
    const [port, workerPort] = [portOf(busy), await closedPort()];
    busy.close();
    const url = `postgres://postgres:secret@127.0.0.1:${closed}/x`;
    const { code, output, ms } = await runDev('', { DATABASE_URL: url, PORT: String(port), WORKER_HEALTH_PORT: String(workerPort), METRICS_PORT: '0' });
    expect(output).toContain(`DATABASE_URL is set (in the environment) but its server does not answer: postgres://postgres:***@127.0.0.1:${closed}/x`);
    expect(output).toContain('unset DATABASE_URL and npm run dev starts an embedded PostgreSQL itself');
    expect(output).not.toContain('secret');
    expect(code).toBe(1);
    expect(ms).toBeLessThan(10_000);
  });

  it('says which file to edit when the setting came from .env', async () => {
    const closed = await closedPort();
    const [port, workerPort] = [await closedPort(), await closedPort()];
    const { code, output } = await runDev(`REDIS_URL=redis://127.0.0.1:${closed}\n`, {
      DATABASE_URL: process.env.DATABASE_URL as string, // the test database's server answers (SELECT 1 only)
      PORT: String(port),
      WORKER_HEALTH_PORT: String(workerPort),
      METRICS_PORT: '0',
    });
    expect(output).toMatch(new RegExp(`REDIS_URL is set \\(in \\.env \\(.*\\.env\\)\\) but its server does not answer: redis://127\\.0\\.0\\.1:${closed}`));
    expect(output).toMatch(/remove REDIS_URL from \S*\.env and npm run dev starts a project-local redis-server/);
    expect(code).toBe(1);
  });
});

describe('the Redis hint of npm run dev', () => {
  it('starts a compose service that publishes the port dev looks at (REDIS_URL default)', () => {
    const { REDIS_COMPOSE_HINT, DEFAULT_REDIS_URL } = require('../scripts/dev-services');
    const { parse } = require('yaml');
    const [, file, service] = /-f (\S+) up -d (\S+)$/.exec(REDIS_COMPOSE_HINT) as string[];
    const compose = parse(readFileSync(resolve(__dirname, '..', file), 'utf8'));
    // As compose reads them with nothing set in the shell: `${NAME:-default}` is its default.
    const ports: string[] = (compose.services[service]?.ports ?? []).map((p: string) => p.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1'));
    const { hostname, port } = new URL(DEFAULT_REDIS_URL);
    expect(ports).toContain(`${hostname}:${port}:6379`);
  });
});

describe('the translation engine npm run dev chooses', () => {
  const { chooseDevTranslation } = require('../scripts/dev-translation') as {
    chooseDevTranslation: (
      env: Record<string, string | undefined>,
      hands: { say: (m: string) => void; pairs: () => string[] | null; canInstall: () => boolean; install: () => boolean },
    ) => { engine: string; note: string };
  };
  const hands = (installed: string[] | null, { root = false, installs = true } = {}) => {
    let now = installed;
    const calls: string[] = [];
    return {
      calls,
      say: () => {},
      pairs: () => now,
      canInstall: () => root,
      install: () => {
        calls.push('install');
        if (installs) now = ['eng-spa', 'spa-eng'];
        return installs;
      },
    };
  };

  it('keeps a TRANSLATION_ENGINE that was set, none included, and installs nothing', () => {
    for (const engine of ['none', 'libretranslate']) {
      const env: Record<string, string> = { TRANSLATION_ENGINE: engine };
      const h = hands(null, { root: true });
      expect(chooseDevTranslation(env, h).engine).toBe(engine);
      expect(env.TRANSLATION_ENGINE).toBe(engine);
      expect(h.calls).toEqual([]);
    }
  });

  it('unset: Apertium when its English-Spanish pair is there', () => {
    const env: Record<string, string | undefined> = {};
    const h = hands(['eng-spa', 'spa-eng']);
    expect(chooseDevTranslation(env, h)).toMatchObject({ engine: 'apertium', note: expect.stringContaining('eng-spa') });
    expect(env.TRANSLATION_ENGINE).toBe('apertium');
    expect(h.calls).toEqual([]);
  });

  it('unset and missing: installs it as root, otherwise none with the command to run', () => {
    const asRoot: Record<string, string | undefined> = {};
    const root = hands(null, { root: true });
    expect(chooseDevTranslation(asRoot, root).engine).toBe('apertium');
    expect(root.calls).toEqual(['install']);

    const asUser: Record<string, string | undefined> = {};
    const user = hands(null);
    expect(chooseDevTranslation(asUser, user)).toEqual({ engine: 'none', note: expect.stringContaining('apt-get install apertium apertium-eng-spa') });
    expect(asUser.TRANSLATION_ENGINE).toBe('none');
    expect(user.calls).toEqual([]);

    const failed = hands(['fra-spa'], { root: true, installs: false });
    expect(chooseDevTranslation({}, failed).engine).toBe('none');
    expect(failed.calls).toEqual(['install']);
  });
});
