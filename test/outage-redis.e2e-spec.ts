import { Clock } from '@kernel/core';
import { WebhookTls } from '@features/webhooks';
import { QUEUES } from '@kernel/queue';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { makeTenant, Tenant } from './support/api';
import { DocumentsHarness, openCase, settled, startDocuments } from './support/documents-harness';
import { EngineStandIn, standInTranslate } from './support/engine-stand-in';
import { PrivateRedis } from './support/private-servers';
import { WebhookReceiver } from './support/webhook-receiver';

// jest ignores testTimeout inside `projects`, so the slow steps say their own.
const SLOW = 60_000;
/** "At once" here is a functional guarantee, not a benchmark: well under the seconds the outage cost. */
const QUICK_MS = 2000;
/** Accepting a document answers 202 fast even with Redis down. */
const ACCEPT_MS = 5000;
/** ioredis waits longer between reconnects as an outage goes on (up to 2 s); by then a queued command waited seconds. */
const LONG_OUTAGE_MS = 20_000;

type Res = { status: number; body: any; headers: Record<string, string> };

/**
 * The api and a worker on a private Redis that the tests stop (SIGKILL,
 * as a crash or a lost container) and start again, empty. (Run under `flock /tmp/ia-443.lock`:
 * the webhook receiver binds 127.0.0.1:443.)
 */
describe('the api while Redis is down', () => {
  let redis: PrivateRedis;
  let h: DocumentsHarness;
  let engine: EngineStandIn;
  let receiver: WebhookReceiver;
  let t: Tenant;
  let caseId: string;
  let stoppedAt = 0;

  const timed = async (send: () => PromiseLike<unknown>): Promise<{ res: Res; ms: number }> => {
    const t0 = Date.now();
    const res = (await send()) as Res;
    return { res, ms: Date.now() - t0 };
  };
  const http = () => h.api.http();

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    engine = await new EngineStandIn().start();
    receiver = await WebhookReceiver.start();
    h = await startDocuments(
      { REDIS_URL: redis.url, TRANSLATION_ENGINE: 'libretranslate', TRANSLATION_ENGINE_URL: engine.url, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' },
      { retry: { attempts: 3, backoffMs: 50 } },
    );
    h.api.app.get(WebhookTls).ca = receiver.cert;
    t = await makeTenant(h.api.app);
    caseId = await openCase(h.db, t.organisationId);
    // One clock minute for the whole outage (the throttle counts per minute), and this address
    // refused once in it while Redis is up: the throttle then asks Redis about it on every call.
    jest.spyOn(h.api.app.get(Clock), 'now').mockReturnValue(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 1000));
    expect((await http().get('/v1/me').set('Authorization', 'Bearer nope')).status).toBe(401);
    await redis.stop();
    stoppedAt = Date.now();
  }, SLOW);

  afterAll(async () => {
    await redis?.resume().catch(() => undefined);
    await h?.close();
    await engine?.stop();
    await receiver?.close();
    await redis?.stop();
  }, SLOW);

  it(
    'a wrong key answers 401 at once, not 500, call after call',
    async () => {
      for (let i = 0; i < 3; i++) {
        const { res, ms } = await timed(() => http().get('/v1/me').set('Authorization', 'Bearer wrong-key'));
        expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 401, code: 'unauthorised' });
        expect(ms).toBeLessThan(QUICK_MS);
      }
    },
    SLOW,
  );

  it(
    'a valid key from an address refused this minute is not held up, however long the outage',
    async () => {
      await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + LONG_OUTAGE_MS - Date.now())));
      // Several calls: a command queued right after ioredis gave up on the previous ones waits longest.
      for (let i = 0; i < 3; i++) {
        const { res, ms } = await timed(() => http().get('/v1/me').set(t.auth));
        expect(res.status).toBe(200);
        expect(ms).toBeLessThan(QUICK_MS);
      }
    },
    SLOW,
  );

  it(
    'the webhook test call still sends and answers what the receiver did, not 500',
    async () => {
      const created = await http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://127.0.0.1/outage-${Date.now()}`, events: ['document.translated'] });
      expect(created.status).toBe(201);
      const { res, ms } = await timed(() => http().post(`/v1/webhooks/${created.body.data.id}/test`).set(t.auth));
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ delivered: true, status: 200 });
      expect(receiver.received(new URL(created.body.data.url).pathname)).toHaveLength(1);
      expect(ms).toBeLessThan(ACCEPT_MS);
    },
    SLOW,
  );

  it(
    'a queue call on the api fails within seconds rather than waiting for Redis',
    async () => {
      const queue = h.api.app.get<Queue>(getQueueToken(QUEUES.translations), { strict: false });
      const t0 = Date.now();
      await expect(queue.getJobCounts()).rejects.toThrow();
      expect(Date.now() - t0).toBeLessThan(ACCEPT_MS);
    },
    SLOW,
  );

  it(
    'POST /v1/documents answers 202 at once; the worker translates it once Redis is back',
    async () => {
      const { res, ms } = await timed(() =>
        http().post('/v1/documents').set(t.auth).send({ case_id: caseId, text: 'Sent during the outage', target_language: 'es' }),
      );
      expect(res.status).toBe(202);
      expect(res.body.data.state).toBe('queued');
      expect(ms).toBeLessThan(ACCEPT_MS);
      await redis.resume();
      const done = await settled(h.api, t, res.body.data.id, 30_000);
      expect(done.body.data.state).toBe('translated');
      expect(done.body.data.translation).toMatchObject({ content: standInTranslate('Sent during the outage') });
    },
    SLOW,
  );
});
