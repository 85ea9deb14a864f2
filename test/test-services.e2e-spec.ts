import { execFile } from 'node:child_process';
import { createServer, Server, Socket } from 'node:net';
import { resolve } from 'node:path';
import { prepareTestRun } from './support/global-setup';

const listen = () =>
  new Promise<Server>((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => done(s));
  });
const portOf = (s: Server) => (s.address() as { port: number }).port;

/** What `npm test` says, and how soon, when its Postgres or Redis is not there. */
describe('the e2e global setup without its servers', () => {
  const saved = { db: process.env.TEST_DATABASE_SERVER_URL, redis: process.env.REDIS_URL };
  afterEach(() => {
    for (const [name, value] of [
      ['TEST_DATABASE_SERVER_URL', saved.db],
      ['REDIS_URL', saved.redis],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  async function setupWith(db: string, redis: string) {
    process.env.TEST_DATABASE_SERVER_URL = db;
    process.env.REDIS_URL = redis;
    const started = Date.now();
    const err = await prepareTestRun().then(
      () => undefined,
      (e: Error) => e,
    );
    return { message: err?.message ?? '(no error)', ms: Date.now() - started };
  }

  it('says what is missing, how to start it and which variable points elsewhere, at once (closed ports)', async () => {
    const s = await listen();
    const closed = portOf(s);
    await new Promise((r) => s.close(r));
    const { message, ms } = await setupWith(`postgres://postgres@127.0.0.1:${closed}/postgres`, `redis://127.0.0.1:${closed}`);
    expect(message).toContain(`PostgreSQL at postgres://postgres@127.0.0.1:${closed}/postgres (TEST_DATABASE_SERVER_URL)`);
    expect(message).toContain('pg_ctlcluster');
    expect(message).toContain('docker compose -f docker/docker-compose.yml up -d postgres');
    expect(message).toContain(`Redis at redis://127.0.0.1:${closed} (REDIS_URL)`);
    expect(message).toContain('docker compose -f docker/docker-compose.yml up -d redis');
    expect(ms).toBeLessThan(5_000);
  });

  it('gives up on a server that accepts and never answers within a few seconds', async () => {
    const held: Socket[] = [];
    const silent = createServer((sock) => held.push(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const port = portOf(silent);
      const { message, ms } = await setupWith(`postgres://postgres@127.0.0.1:${port}/postgres`, `redis://127.0.0.1:${port}`);
      expect(message).toContain(`PostgreSQL at postgres://postgres@127.0.0.1:${port}/postgres`);
      expect(message).toContain(`Redis at redis://127.0.0.1:${port}`);
      expect(ms).toBeLessThan(8_000);
    } finally {
      held.forEach((s) => s.destroy());
      silent.close();
    }
  }, 20_000);
});

describe("npm test's first step (scripts/test-services.js, before the build and type check)", () => {
  it('exits 1 within seconds, saying what is missing', async () => {
    const s = await listen();
    const closed = portOf(s);
    await new Promise((r) => s.close(r));
    const env = {
      PATH: process.env.PATH ?? '',
      TEST_DATABASE_SERVER_URL: `postgres://postgres@127.0.0.1:${closed}/postgres`,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
    };
    const started = Date.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = execFile(process.execPath, [resolve(__dirname, '../scripts/test-services.js')], { env }, (_err, _out, stderr) =>
        done({ code: child.exitCode, stderr }),
      );
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`PostgreSQL at postgres://postgres@127.0.0.1:${closed}/postgres (TEST_DATABASE_SERVER_URL)`);
    expect(stderr).toContain(`Redis at redis://127.0.0.1:${closed} (REDIS_URL)`);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('exits 0 when both answer', async () => {
    const { NODE_ENV: _, ...env } = process.env;
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((done) => {
      const child = execFile(process.execPath, [resolve(__dirname, '../scripts/test-services.js')], { env }, (_err, _out, stderr) =>
        done({ code: child.exitCode, stderr }),
      );
    });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
