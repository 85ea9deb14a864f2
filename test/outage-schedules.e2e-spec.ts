import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@kernel/config';
import { bullConnection, bullPrefix, MAINTENANCE_JOBS, QUEUES, TRANSLATION_JOBS } from '@kernel/queue';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from '../apps/worker/src/worker.module';
import { PrivateRedis } from './support/private-servers';
import { until } from './support/until';

// jest ignores testTimeout inside `projects`, so the slow steps say their own.
const SLOW = 90_000;
/** The schedules are back within a minute; the check runs every 20 s, so 30 s is the bound here. */
const BACK_WITHIN_MS = 30_000;

/** Every repeatable job the worker must keep, by queue (written out here, not read from the code under test). */
const EXPECTED: Record<string, string[]> = {
  [QUEUES.maintenance]: [
    MAINTENANCE_JOBS.sweepIdempotencyKeys,
    MAINTENANCE_JOBS.sweepDeliveries,
    MAINTENANCE_JOBS.switchOffFailingWebhooks,
    MAINTENANCE_JOBS.sweepProvisioningEvents,
    MAINTENANCE_JOBS.warnScimRefusals,
  ].sort(),
  [QUEUES.translations]: [TRANSLATION_JOBS.requeueStale],
};

describe('schedules survive a Redis that lost its data', () => {
  let redis: PrivateRedis;
  let config: AppConfig;
  const workers: INestApplicationContext[] = [];
  const queues: Record<string, Queue> = {};

  const startWorker = async () => {
    const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.init();
    workers.push(app);
  };
  /** The scheduler ids Redis holds, by queue (each id as many times as it is there). */
  const schedulers = async () => {
    const out: Record<string, string[]> = {};
    for (const name of Object.keys(EXPECTED)) out[name] = (await queues[name].getJobSchedulers()).map((s) => s.key).sort();
    return out;
  };
  const allBack = () => until(async () => JSON.stringify(await schedulers().catch(() => null)) === JSON.stringify(EXPECTED), 'every schedule', BACK_WITHIN_MS);

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    config = AppConfig.fromEnv({ REDIS_URL: redis.url, WORKER_HEALTH_PORT: '0' });
    for (const name of Object.keys(EXPECTED)) {
      queues[name] = new Queue(name, { connection: bullConnection(config.redis), prefix: bullPrefix(config.redisPrefix) });
    }
    await startWorker();
  }, SLOW);

  afterAll(async () => {
    for (const q of Object.values(queues)) await q.close().catch(() => undefined);
    for (const w of workers) await w.close().catch(() => undefined);
    await redis?.stop();
  }, SLOW);

  it('a worker that starts makes every schedule itself', async () => {
    expect(await schedulers()).toEqual(EXPECTED);
  });

  it(
    'after FLUSHALL (no reconnect) every schedule is back within the bound',
    async () => {
      const admin = new Redis(redis.url);
      await admin.flushall();
      await admin.quit();
      expect(await schedulers()).toEqual({ [QUEUES.maintenance]: [], [QUEUES.translations]: [] });
      const t0 = Date.now();
      await allBack();
      expect(Date.now() - t0).toBeLessThan(BACK_WITHIN_MS);
    },
    SLOW,
  );

  it(
    'after a restart of Redis without persistence every schedule is back within the bound',
    async () => {
      await redis.stop();
      await new Promise((r) => setTimeout(r, 500));
      await redis.resume();
      const t0 = Date.now();
      await allBack();
      expect(Date.now() - t0).toBeLessThan(BACK_WITHIN_MS);
    },
    SLOW,
  );

  it(
    'two workers make one schedule per job, not two',
    async () => {
      await startWorker();
      expect(await schedulers()).toEqual(EXPECTED);
    },
    SLOW,
  );
});
