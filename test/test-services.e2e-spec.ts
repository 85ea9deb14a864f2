import { createServer, Server, Socket } from 'node:net';
import globalSetup from './support/global-setup';

const listen = () =>
  new Promise<Server>((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => done(s));
  });
const portOf = (s: Server) => (s.address() as { port: number }).port;

/** What `npm test` says, and how soon, when its Postgres or Redis is not there. */
describe('the e2e global setup without its servers', () => {
  const saved = { db: process.env.TEST_DATABASE_SERVER_URL, redis: process.env.REDIS_URL };
  afterEach(() => {
    process.env.TEST_DATABASE_SERVER_URL = saved.db;
    process.env.REDIS_URL = saved.redis;
  });

  async function setupWith(db: string, redis: string) {
    process.env.TEST_DATABASE_SERVER_URL = db;
    process.env.REDIS_URL = redis;
    const started = Date.now();
    const err = await globalSetup().then(() => undefined, (e: Error) => e);
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
