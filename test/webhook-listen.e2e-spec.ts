import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import request from 'supertest';
import { admin, BuiltProcess, childEnv } from './support/built-processes';
import { dropDatabase, recreateDatabase, withDatabase } from './support/test-db';

/**
 * `npm run admin -- webhook listen` against an api and a worker started with the settings
 * `npm run dev` gives them (scripts/dev-receiver.js): a certificate for 127.0.0.1 they trust and an
 * allowance for that one address. The receiver binds 127.0.0.1:443, so this spec runs alone (as the
 * suite runs every spec: one after another).
 */
const ROOT = resolve(__dirname, '..');
const ADMIN = join(ROOT, 'dist/apps/admin/src/main.js');
const { allowLocalReceiver } = require('../scripts/dev-receiver') as {
  allowLocalReceiver: (env: Record<string, string>, dataDir: string) => Promise<{ cert: string } | null>;
};

const until = async (what: string, check: () => boolean, ms = 60_000) => {
  for (const end = Date.now() + ms; !check(); await new Promise((r) => setTimeout(r, 100))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
};

/** The listen command as a developer runs it; its live lines are on stderr, its answer on stdout. */
function listen(env: Record<string, string>, args: string[] = []) {
  const child: ChildProcess = spawn(process.execPath, [ADMIN, 'webhook', 'listen', ...args, '--json'], { cwd: ROOT, env: childEnv(env) });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out, exited };
}

const port443Free = () =>
  new Promise<boolean>((done) => {
    const s = createServer();
    s.once('error', () => done(false));
    s.listen(443, '127.0.0.1', () => s.close(() => done(true)));
  });

describe('webhook listen: a receiver on this machine for npm run dev', () => {
  const server = process.env.TEST_DATABASE_SERVER_URL!;
  const database = `${process.env.TEST_DATABASE_NAME}_listen`;
  const dataDir = mkdtempSync(join(tmpdir(), 'listen-'));
  let env: Record<string, string>;
  let api: BuiltProcess;
  let worker: BuiltProcess;
  let key: string;
  const bearer = () => ({ Authorization: `Bearer ${key}` });

  beforeAll(async () => {
    await recreateDatabase(server, database);
    env = {
      NODE_ENV: 'development',
      DATABASE_URL: withDatabase(server, database),
      REDIS_PREFIX: `${process.env.REDIS_PREFIX}listen`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      TRANSLATION_ENGINE: 'apertium',
      SCHEDULE_EVERY_MS: '1000',
    };
    // What npm run dev does before it starts the processes.
    expect(await allowLocalReceiver(env, dataDir)).toMatchObject({ cert: join(dataDir, 'webhook-receiver', 'cert.pem') });
    expect(env.WEBHOOK_ALLOWED_PRIVATE_CIDRS).toBe('127.0.0.1/32');
    api = await BuiltProcess.start('api', 'api', { ...env, MIGRATIONS_RUN_ON_START: 'true' });
    await api.ready();
    worker = await BuiltProcess.start('worker', 'worker', env);
    await worker.ready();
    key = (await admin<{ key: string }>(['demo', 'setup', '--name', 'Listen'], env)).key;
    // As npm run dev leaves it: the demo key is where the command looks when no --key is given.
    writeFileSync(join(dataDir, 'demo.json'), JSON.stringify({ key }));
  }, 180_000);

  afterAll(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await dropDatabase(server, database);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('makes a webhook for every event the key may receive, prints each delivery verified, and removes it on Ctrl-C', async () => {
    const run = listen({ ...env }, ['--api', api.url]);
    await until('the receiver to listen', () => run.out.stderr.includes('Listening on https://127.0.0.1/webhooks/') || run.child.exitCode !== null);
    expect(run.out.stderr).toMatch(/receives: conversation\.ended, summary\.ready, document\.translated, user\.joined/);
    // A test event, sent by the api.
    const webhookId = /Webhook (\d+) /.exec(run.out.stderr)![1];
    expect((await request(api.url).post(`/v1/webhooks/${webhookId}/test`).set(bearer())).body.data).toMatchObject({ delivered: true, status: 200 });
    await until('the test event', () => /webhook\.test \S+ {2}signature verified/.test(run.out.stderr));

    // An event the worker delivers: a document translated by Apertium.
    const made = await request(api.url).post('/v1/cases').set(bearer()).send({ external_ref: 'listen-1', title: 'Listen' });
    expect(made.status).toBe(201);
    const doc = await request(api.url)
      .post('/v1/documents')
      .set(bearer())
      .send({ case_id: made.body.data.id, text: 'The cat is black.', source_language: 'en', target_language: 'es' });
    expect(doc.status).toBe(202);
    await until('the document.translated delivery', () => /document\.translated \S+ {2}signature verified/.test(run.out.stderr));
    expect(run.out.stderr).toContain(`"document_id": "${doc.body.data.id}"`);
    expect((await request(api.url).get('/v1/webhooks').set(bearer())).body.data.map((w: { id: string }) => w.id)).toEqual([webhookId]);

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    expect(JSON.parse(run.out.stdout)).toEqual({ webhook_id: webhookId, received: 2, verified: 2, removed: true });
    expect((await request(api.url).get('/v1/webhooks').set(bearer())).body.data).toEqual([]);
    expect(await port443Free()).toBe(true);
  }, 120_000);

  it('refuses to run with NODE_ENV=production, and binds nothing', async () => {
    const { SCHEDULE_EVERY_MS: _testsOnly, ...settings } = env; // refused in production on its own
    const run = listen({ ...settings, NODE_ENV: 'production' }, ['--api', api.url]);
    expect(await run.exited).toBe(1);
    expect(run.out.stderr).toContain('webhook listen is for development only and does not run with NODE_ENV=production');
    expect(JSON.parse(run.out.stdout)).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } });
    expect(await port443Free()).toBe(true);
  });

  it('without the certificate npm run dev makes, it says to start npm run dev first', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'listen-empty-'));
    try {
      const run = listen({ ...env, DATA_DIR: empty }, ['--api', api.url]);
      expect(await run.exited).toBe(1);
      expect(run.out.stderr).toMatch(/no receiver certificate at .*webhook-receiver\/cert\.pem: start the product with "npm run dev" first/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('npm run dev changes nothing about addresses with NODE_ENV=production', async () => {
    const prod: Record<string, string> = { NODE_ENV: 'production', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8' };
    expect(await allowLocalReceiver(prod, dataDir)).toBeNull();
    expect(prod).toEqual({ NODE_ENV: 'production', WEBHOOK_ALLOWED_PRIVATE_CIDRS: '10.0.0.0/8' });
  });
});
