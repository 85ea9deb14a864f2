import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { dataSourceOptions, TransactionHost } from '@kernel/database';
import { Outbox } from '@kernel/events';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { makeTenant, startApi, TestApi } from './support/api';
import { PrivatePostgres } from './support/private-servers';
import { recreateDatabase, withDatabase } from './support/test-db';
import { until } from './support/until';
import { startWebhookWorker } from './support/webhook-worker';
import { WebhookReceiver } from './support/webhook-receiver';

// jest ignores testTimeout inside `projects`, so the slow steps say their own.
const SLOW = 180_000;
const BURST = 30;
/** The receiver answers this late, so the answers come while Postgres is away. */
const ANSWER_DELAY_MS = 1500;
/** Postgres is down this long (a fast shutdown cuts every connection). */
const DOWN_MS = 3000;

/**
 * Postgres restarted while deliveries are in flight. Their attempts were sent;
 * recording the outcome failed; the job failed and ran again (or was recovered ~a minute later),
 * and every one of them was sent twice. Now the outcome is recorded once Postgres is back, so
 * nothing is sent twice and nothing is lost. (Run under `flock /tmp/ia-443.lock`: the receiver
 * binds 127.0.0.1:443.)
 */
describe('Webhooks: Postgres restarts while deliveries are in flight', () => {
  let pg: PrivatePostgres;
  let receiver: WebhookReceiver;
  let api: TestApi;
  let worker: INestApplicationContext;
  let env: Record<string, string>;

  beforeAll(async () => {
    pg = await PrivatePostgres.start();
    const name = `integrations_outage_${process.pid}`;
    await recreateDatabase(pg.serverUrl, name);
    env = {
      DATABASE_URL: withDatabase(pg.serverUrl, name),
      // Its own queues: jobs of this spec's database must not meet another spec's worker.
      REDIS_PREFIX: `${process.env.REDIS_PREFIX}pg`,
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      WORKER_HEALTH_PORT: '0',
    };
    const ds = new DataSource(dataSourceOptions(AppConfig.fromEnv(env), 'test-migrate'));
    await ds.initialize();
    await ds.runMigrations();
    await ds.destroy();
    receiver = await WebhookReceiver.start();
    api = await startApi(env);
    worker = await startWebhookWorker(AppConfig.fromEnv(env), receiver.cert);
    await worker.init();
  }, SLOW);

  afterAll(async () => {
    await worker?.close().catch(() => undefined);
    await api?.close().catch(() => undefined);
    await receiver?.close();
    await pg?.remove();
  }, SLOW);

  it(
    'every delivery arrives exactly once, none is lost',
    async () => {
      const t = await makeTenant(api.app);
      const path = `/pg-restart-${randomBytes(4).toString('hex')}`;
      const made = await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://127.0.0.1${path}`, events: ['conversation.ended'] });
      expect(made.status).toBe(201);
      receiver.reply(path, { status: 200, delayMs: ANSWER_DELAY_MS });
      await api.app.get(TransactionHost).run(async (m) => {
        for (let i = 0; i < BURST; i++) {
          await api.app.get(Outbox).emit(m, t.organisationId, 'conversation.ended', { conversation_id: randomBytes(16).toString('hex') });
        }
      });

      // Every delivery is sent and waiting for its answer: now Postgres goes away, and comes back.
      await receiver.waitFor(path, BURST, 30_000);
      await pg.restart(DOWN_MS);

      const db = api.app.get(DataSource);
      const delivered = async () => {
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [made.body.data.id]);
        return n === BURST;
      };
      await until(() => delivered().catch(() => false), `${BURST} deliveries recorded as delivered`, 120_000);

      const ids: string[] = receiver.received(path).map((r) => JSON.parse(r.raw).id);
      const all: string[] = (await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, [made.body.data.id])).map((r: { id: string }) => r.id);
      expect(all).toHaveLength(BURST);
      expect(all.every((id) => ids.includes(id))).toBe(true);
      const duplicates = ids.length - new Set(ids).size;
      expect(duplicates).toBe(0);
      const attempts = await db.query(
        `SELECT count(*)::int AS n FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1`,
        [made.body.data.id],
      );
      expect(attempts).toEqual([{ n: BURST }]);
    },
    SLOW,
  );
});
