import { TransactionHost } from '@kernel/database';
import { Outbox } from '@kernel/events';
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { makeTenant, startApi, TestApi } from './support/api';
import { retireDeliveries } from './support/webhook-stand';
import { WebhookReceiver } from './support/webhook-receiver';
import { spawnReadyWorker } from './support/webhook-worker';

// Plain JS: `npm run build`'s own function, so the spec's workers run the same build.
const { buildInto } = require('../scripts/build') as { buildInto: (distDir: string) => void };

const ROOT = resolve(__dirname, '..');
const SLOW = 180_000;

/**
 * The worker as its own process, built from the current sources into a private directory (so
 * this spec neither needs nor races `npm run build`'s dist/), with the webhook module added the way
 * the worker module will import it. It trusts the receiver's certificate the way an operator
 * trusts an internal CA: NODE_EXTRA_CA_CERTS.
 */
const CHILD = `
require('reflect-metadata');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Logger } = require('nestjs-pino');
const { WorkerModule } = require('./apps/worker/src/worker.module');
const { WebhooksModule } = require('./libs/features/webhooks');
const { WebhooksWorkerModule } = require('./libs/features/webhooks/worker');
const { installGracefulShutdown } = require('./libs/kernel/logging');
class CrashTestWorker {}
Module({ imports: [WorkerModule.forRoot(), WebhooksModule, WebhooksWorkerModule] })(CrashTestWorker);
NestFactory.createApplicationContext(CrashTestWorker, { bufferLogs: true }).then((app) => {
  app.useLogger(app.get(Logger));
  installGracefulShutdown(app, app.get(Logger), 25000, 'worker');
  process.stdout.write('worker ready\\n');
}, (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

describe('Webhooks: a worker killed in the middle of a burst', () => {
  let api: TestApi;
  let receiver: WebhookReceiver;
  let db: DataSource;
  const buildDir = join(ROOT, '.data', 'test', `webhook-crash-build-${process.pid}`);
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    api = await startApi({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' });
    db = api.app.get(DataSource);
    // The same build as `npm run build`, into a directory of its own.
    buildInto(buildDir);
    writeFileSync(join(buildDir, 'crash-test-worker.js'), CHILD);
  }, SLOW);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await retireDeliveries(db);
    await api?.close();
    await receiver?.close();
    rmSync(buildDir, { recursive: true, force: true });
  }, SLOW);

  const startWorker = async (): Promise<ChildProcess> => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      WEBHOOK_CONCURRENCY: '10',
      WORKER_HEALTH_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NODE_EXTRA_CA_CERTS: receiver.tls.certFile,
    };
    delete env.NODE_TLS_REJECT_UNAUTHORIZED;
    return spawnReadyWorker(join(buildDir, 'crash-test-worker.js'), env, children);
  };

  it(
    'SIGKILL mid-burst, then a restart: every delivery still arrives at least once, none is lost',
    async () => {
      const t = await makeTenant(api.app);
      const path = `/crash-${randomBytes(4).toString('hex')}`;
      const made = await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://127.0.0.1${path}`, events: ['conversation.ended'] });
      expect(made.status).toBe(201);
      // Slow enough answers that the burst is still in flight when the worker dies.
      receiver.reply(path, { status: 200, delayMs: 40 });

      const burst = 600;
      await api.app.get(TransactionHost).run(async (m) => {
        for (let i = 0; i < burst; i++) {
          await api.app.get(Outbox).emit(m, t.organisationId, 'conversation.ended', { conversation_id: randomBytes(16).toString('hex') });
        }
      });

      const first = await startWorker();
      await receiver.waitFor(path, burst / 5, 60_000);
      first.kill('SIGKILL');
      await new Promise<void>((r) => (first.exitCode !== null || first.signalCode !== null ? r() : first.once('exit', () => r())));
      const beforeRestart = new Set(receiver.received(path).map((r) => JSON.parse(r.raw).id)).size;
      expect(beforeRestart).toBeLessThan(burst);

      const second = await startWorker();
      const deadline = Date.now() + 150_000;
      for (;;) {
        const got = new Set(receiver.received(path).map((r) => JSON.parse(r.raw).id));
        if (got.size >= burst) break;
        if (Date.now() > deadline) throw new Error(`${got.size} of ${burst} deliveries arrived (${beforeRestart} before the kill)`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const got = new Set(receiver.received(path).map((r) => JSON.parse(r.raw).id));
      // Every event made exactly one delivery, and every delivery arrived.
      const all: string[] = (await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, [made.body.data.id])).map((r: { id: string }) => r.id);
      expect(all).toHaveLength(burst);
      expect(all.every((id) => got.has(id))).toBe(true);
      const conversations = new Set(receiver.received(path).map((r) => JSON.parse(r.raw).data.conversation_id));
      expect(conversations.size).toBe(burst);
      for (;;) {
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [made.body.data.id]);
        if (n === burst) break;
        if (Date.now() > deadline) throw new Error(`${n} of ${burst} deliveries recorded as delivered`);
        await new Promise((r) => setTimeout(r, 200));
      }
      second.kill('SIGTERM');
      await new Promise<void>((r) => (second.exitCode !== null || second.signalCode !== null ? r() : second.once('exit', () => r())));
      expect(second.exitCode).toBe(0);
    },
    SLOW,
  );
});
