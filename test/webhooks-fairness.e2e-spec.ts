import { AppConfig } from '@kernel/config';
import { TransactionHost } from '@kernel/database';
import { Outbox } from '@kernel/events';
import { QUEUES } from '@kernel/queue';
import { getQueueToken } from '@nestjs/bullmq';
import { INestApplicationContext } from '@nestjs/common';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { OutboxRelayLoop, WebhookSlots } from '@features/webhooks/worker';
import { makeTenant, Tenant, TestApi } from './support/api';
import { MadeHook, retireDeliveries, startReceiverApi, startWebhookStand, WebhookStand } from './support/webhook-stand';
import { WebhookReceiver } from './support/webhook-receiver';
import { spawnReadyWorker, startWebhookWorker } from './support/webhook-worker';

// Plain JS: `npm run build`'s own function, so the spec's workers run the same build.
const { buildInto } = require('../scripts/build') as { buildInto: (distDir: string) => void };

const ROOT = resolve(__dirname, '..');
const SLOW = 120_000;

/** Polls `check` until it answers something truthy (no timing is asserted: the bound only ends a stuck test). */
async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await check();
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A receiver path that hangs (holds every request) until `recover()`, counting requests in flight as the receiver sees them. */
function hangingPath(receiver: WebhookReceiver, path: string) {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const state = { inFlight: 0, maxInFlight: 0, recovered: false };
  receiver.reply(path, () => {
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    return { hold: state.recovered ? undefined : held, done: () => state.inFlight-- };
  });
  return {
    state,
    recover() {
      state.recovered = true;
      release();
    },
  };
}

async function emit(api: TestApi, t: Tenant, n: number): Promise<void> {
  await api.app.get(TransactionHost).run(async (m) => {
    for (let i = 0; i < n; i++) await api.app.get(Outbox).emit(m, t.organisationId, 'conversation.ended', { conversation_id: randomBytes(16).toString('hex') });
  });
}

const ids = (receiver: WebhookReceiver, path: string) => receiver.received(path).map((r) => JSON.parse(r.raw).id as string);
const states = async (db: DataSource, hook: MadeHook): Promise<Record<string, number>> =>
  Object.fromEntries(
    (await db.query(`SELECT state, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 GROUP BY state`, [hook.id])).map(
      (r: { state: string; n: number }) => [r.state, r.n],
    ),
  );

describe('Fair delivery: a hanging receiver holds at most its cap, and nobody else waits behind it', () => {
  const CAP = 3;
  let stand: WebhookStand;
  let redis: Redis;

  beforeAll(async () => {
    // 5 worker slots, 3 of which the hanging webhook may hold: the other organisation's deliveries
    // only get through if the hanging webhook's waiting deliveries hold no slot.
    stand = await startWebhookStand({ WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: String(CAP), WEBHOOK_CONCURRENCY: '5', WEBHOOK_RETRY_SCALE: '0.001' });
    redis = new Redis(stand.api.config.redisUrl, { maxRetriesPerRequest: 1 });
  }, SLOW);

  afterAll(async () => {
    await stand?.close();
    await redis?.quit();
  }, SLOW);

  it(
    'the hanging receiver never has more than the cap in flight; the fast one gets everything meanwhile; once it recovers every parked delivery arrives, once',
    async () => {
      const [slowOrg, fastOrg] = [await makeTenant(stand.api.app), await makeTenant(stand.api.app)];
      const slow = await stand.hook(slowOrg, 'hanging');
      const fast = await stand.hook(fastOrg, 'fast');
      const hang = hangingPath(stand.receiver, slow.path);
      const slots = stand.worker.get(WebhookSlots);
      const [, parkedKey] = slots.keys(slow.id);

      // The hanging organisation's 20 events first, so their jobs are ahead of the other's in the queue.
      await emit(stand.api, slowOrg, 20);
      await stand.receiver.waitFor(slow.path, CAP);
      await emit(stand.api, fastOrg, 20);

      await stand.receiver.waitFor(fast.path, 20, 30_000);
      // Every fast delivery arrived while the hanging receiver still held its three.
      expect(hang.state.inFlight).toBe(CAP);
      expect(stand.receiver.received(slow.path)).toHaveLength(CAP);
      expect(new Set(ids(stand.receiver, fast.path)).size).toBe(20);
      await until('the other 17 parked', async () => (await redis.zcard(parkedKey)) === 17);

      // The recovery sweep leaves parked deliveries alone: it queues none of them again.
      const parked = await redis.zrange(parkedKey, 0, -1);
      await stand.worker.get(OutboxRelayLoop).recover(0);
      const firstAttempts = stand.worker.get<Queue>(getQueueToken(QUEUES.webhookDeliveries));
      const retries = stand.worker.get<Queue>(getQueueToken(QUEUES.webhookRetries));
      for (const id of parked) {
        expect(await firstAttempts.getJob(id)).toBeUndefined();
        expect(await retries.getJob(id)).toBeUndefined();
      }
      expect(await redis.zrange(parkedKey, 0, -1)).toEqual(parked);
      expect(stand.receiver.received(slow.path)).toHaveLength(CAP);

      hang.recover();
      await stand.receiver.waitFor(slow.path, 20, 30_000);
      await until('every delivery recorded as delivered', async () => (await states(stand.db, slow)).delivered === 20);
      const got = ids(stand.receiver, slow.path);
      expect(new Set(got).size).toBe(20);
      expect(got).toHaveLength(20);
      expect(hang.state.maxInFlight).toBeLessThanOrEqual(CAP);
      expect(await states(stand.db, fast)).toEqual({ delivered: 20 });
      expect(await redis.zcard(parkedKey)).toBe(0);
    },
    SLOW,
  );
});

/** The worker as its own process (so it can be SIGKILLed), built from the current sources like webhooks-crash's. */
const CHILD = `
require('reflect-metadata');
const { NestFactory } = require('@nestjs/core');
const { Logger } = require('nestjs-pino');
const { WorkerModule } = require('./apps/worker/src/worker.module');
NestFactory.createApplicationContext(WorkerModule.forRoot(), { bufferLogs: true }).then((app) => {
  app.useLogger(app.get(Logger));
  process.stdout.write('worker ready\\n');
}, (err) => { process.stderr.write(String(err && err.stack || err)); process.exit(1); });
`;

describe('Fair delivery: the leases of a SIGKILLed worker expire by themselves', () => {
  const CAP = 2;
  const settings = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0', WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: String(CAP) };
  let api: TestApi;
  let receiver: WebhookReceiver;
  let redis: Redis;
  let worker: INestApplicationContext | undefined;
  const buildDir = join(ROOT, '.data', 'test', `webhook-fairness-build-${process.pid}`);
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    ({ api, receiver } = await startReceiverApi(settings));
    redis = new Redis(api.config.redisUrl, { maxRetriesPerRequest: 1 });
    // The same build as `npm run build`, into a directory of its own.
    buildInto(buildDir);
    writeFileSync(join(buildDir, 'fairness-worker.js'), CHILD);
  }, SLOW);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await worker?.close();
    await retireDeliveries(api?.app.get(DataSource));
    await api?.close();
    await receiver?.close();
    await redis?.quit();
    rmSync(buildDir, { recursive: true, force: true });
  }, SLOW);

  const startChild = async (): Promise<ChildProcess> => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...settings, HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_EXTRA_CA_CERTS: receiver.tls.certFile };
    delete env.NODE_TLS_REJECT_UNAUTHORIZED;
    return spawnReadyWorker(join(buildDir, 'fairness-worker.js'), env, children);
  };

  it(
    'a worker killed while holding the slots of a hanging webhook: its leases lapse, and another worker then delivers the parked deliveries',
    async () => {
      const t = await makeTenant(api.app);
      const path = `/fair-kill-${randomBytes(4).toString('hex')}`;
      const made = await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://127.0.0.1${path}`, events: ['conversation.ended'] });
      expect(made.status).toBe(201);
      const hookId: string = made.body.data.id;
      const hang = hangingPath(receiver, path);

      const child = await startChild();
      await emit(api, t, 5);
      await receiver.waitFor(path, CAP);
      const keyOf = (suffix: string) => `${api.config.redisPrefix}:webhook-slots:{${hookId}}:${suffix}`;
      await until('three parked', async () => (await redis.zcard(keyOf('parked'))) === 3);
      const parked = await redis.zrange(keyOf('parked'), 0, -1);
      expect(await redis.zcard(keyOf('leases'))).toBe(CAP);

      child.kill('SIGKILL');
      await new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
      await until('the receiver saw the killed worker hang up', () => hang.state.inFlight === 0);

      // Another worker. The dead one's leases still hold the webhook's two slots, until they lapse.
      worker = await startWebhookWorker(AppConfig.fromEnv(settings), receiver.cert);
      const redisNow = async () => {
        const [s, us] = await redis.time();
        return Number(s) * 1000 + Math.floor(Number(us) / 1000);
      };
      expect(await redis.zcount(keyOf('leases'), await redisNow(), '+inf')).toBe(CAP);
      await until('the dead worker’s leases lapse', async () => (await redis.zcount(keyOf('leases'), await redisNow(), '+inf')) === 0, 45_000);

      // The sweep hands the lapsed slots to the parked deliveries; the new worker attempts two, parks the third again.
      await worker.get(OutboxRelayLoop).recover(0);
      await receiver.waitFor(path, CAP + 2);
      expect(hang.state.maxInFlight).toBeLessThanOrEqual(CAP);

      hang.recover();
      const db = api.app.get(DataSource);
      await until('the parked deliveries delivered', async () => {
        const rows: Array<{ id: string }> = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [hookId]);
        const delivered = new Set(rows.map((r) => r.id));
        return parked.every((id) => delivered.has(id));
      });
      expect(hang.state.maxInFlight).toBeLessThanOrEqual(CAP);
      // The two attempts in flight at the kill are BullMQ's stalled jobs (re-run within about a minute, docs/webhooks.md); not awaited here.
    },
    SLOW,
  );
});
