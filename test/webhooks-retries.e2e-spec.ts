import { INestApplicationContext } from '@nestjs/common';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { DataSource } from 'typeorm';
import { DeliveryQueues } from '@features/webhooks/worker';
import { AttemptOutcome, DeliveryAttemptsService, retryDelayMs, verifySignature } from '@features/webhooks';
import { makeTenant, Tenant, TestApi } from './support/api';
import { ReceivedRequest, WebhookReceiver } from './support/webhook-receiver';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';
import { until as untilDefault } from './support/until';

const until = <T>(probe: () => Promise<T | undefined | null | false>, what: string, ms = 20_000) => untilDefault(probe, what, ms);

const SCALE = 0.0001;
const SLOW = 90_000;

/**
 * Retries on the contract's timetable, scaled down (WEBHOOK_RETRY_SCALE, tests only): 1 min → 6 ms
 * … 24 h → 8.6 s, so all eight attempts take about 16 s. One job at a time per queue
 * (WEBHOOK_CONCURRENCY=1) shows that first attempts never wait behind retries.
 */
describe('Webhooks: retries, the timetable, timeouts', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let db: DataSource;
  const outcomes = new Map<string, AttemptOutcome[]>();
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    stand = await startWebhookStand({ WEBHOOK_RETRY_SCALE: String(SCALE), WEBHOOK_CONCURRENCY: '1' });
    ({ api, worker, receiver, db } = stand);
    // Every attempt's outcome, as the queue saw it (what it scheduled next).
    const attempts = worker.get(DeliveryAttemptsService);
    const real = attempts.attempt.bind(attempts);
    jest.spyOn(attempts, 'attempt').mockImplementation(async (id) => {
      const o = await real(id);
      outcomes.set(id, [...(outcomes.get(id) ?? []), o]);
      return o;
    });
  }, SLOW);
  afterAll(() => stand?.close(), SLOW);

  const hook = (t: Tenant, label: string) => stand.hook(t, label);
  const endConversation = async (t: Tenant) => {
    const ingest = api.app.get(ConversationIngestService);
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest.start(c.id, 'en', 'fr');
    await ingest.appendTurn(conv.id, { speaker: 'a', language: 'en', text: 'hello', translation: 'bonjour' });
    return ingest.end(conv.id);
  };
  const deliveryOf = async (webhookId: string) =>
    until(async () => (await db.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1`, [webhookId]))[0], 'the delivery');
  const attemptsOf = (deliveryId: string) =>
    db.query(`SELECT series, number, succeeded, status, error, attempted_at, duration_ms FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id`, [
      deliveryId,
    ]);

  it(
    'follows the timetable exactly for eight attempts in all, with the same delivery id, and makes no ninth',
    async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'always-fails');
      receiver.reply(w.path, { status: 500 });
      await endConversation(t);
      const got = await receiver.waitFor(w.path, 8, 60_000);
      const d = await until(async () => {
        const [row] = await db.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1`, [w.id]);
        return row?.state === 'failed' ? row : undefined;
      }, 'the eighth failure to be recorded');
      // Well past when a ninth would be due (the longest delay is 8.6 s scaled; nothing further is scheduled at all).
      await new Promise((r) => setTimeout(r, 1500));
      expect(receiver.received(w.path)).toHaveLength(8);

      const ids = new Set(got.map((g: ReceivedRequest) => JSON.parse(g.raw).id));
      expect([...ids]).toEqual([d.id]);
      for (const g of got) expect(verifySignature(g.headers['service-signature'] as string, g.raw, w.secret)).toBe(true);

      const scheduled = (outcomes.get(d.id) ?? []).filter((o) => o.kind === 'failed').map((o) => (o.kind === 'failed' ? o.retryInMs : undefined));
      expect(scheduled).toEqual([6, 30, 180, 720, 2160, 4320, 8640, null]);
      expect(scheduled.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, SCALE)));

      const log = await attemptsOf(d.id);
      expect(log.map((a: any) => [a.series, a.number, a.succeeded, a.status, a.error])).toEqual(
        [1, 2, 3, 4, 5, 6, 7, 8].map((n) => [1, n, false, 500, 'answered 500']),
      );
      // Never early: each attempt starts at least the scaled delay after the previous one ended (ms precision).
      for (let n = 1; n < 8; n++) {
        const ended = log[n - 1].attempted_at.getTime() + log[n - 1].duration_ms;
        expect(log[n].attempted_at.getTime()).toBeGreaterThanOrEqual(ended + retryDelayMs(n, SCALE)! - 2);
      }
      expect(d).toMatchObject({ state: 'failed', attempts: 8, next_attempt_at: null, finished_at: expect.any(Date) });
      expect(await worker.get(DeliveryQueues).retries.getJob(d.id)).toBeUndefined();
      const [hookRow] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w.id]);
      expect(hookRow.failing_since).toEqual(log[0].attempted_at);
    },
    SLOW,
  );

  it(
    'a 3xx counts as a failure and is retried; a success ends the run of failures',
    async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'redirect-then-ok');
      let n = 0;
      receiver.reply(w.path, () => (++n === 1 ? { status: 307, headers: { location: `${w.path}-moved` } } : { status: 204 }));
      await endConversation(t);
      await receiver.waitFor(w.path, 2);
      const d = await until(async () => {
        const [row] = await db.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1`, [w.id]);
        return row?.state === 'delivered' ? row : undefined;
      }, 'delivery');
      expect((await attemptsOf(d.id)).map((a: any) => [a.number, a.succeeded, a.status])).toEqual([
        [1, false, 307],
        [2, true, 204],
      ]);
      expect(receiver.received(`${w.path}-moved`)).toHaveLength(0);
      const [hookRow] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w.id]);
      expect(hookRow.failing_since).toBeNull();
    },
    SLOW,
  );

  it(
    'waits 10 seconds for the whole answer; a slow retry holds up neither first attempts nor other endpoints',
    async () => {
      const t = await makeTenant(api.app);
      const slow = await hook(t, 'slow');
      let n = 0;
      // The first attempt fails at once; the first retry gets an answer only after 11 s; the next succeeds.
      receiver.reply(slow.path, () => (++n === 1 ? { status: 500 } : n === 2 ? { status: 200, delayMs: 11_000 } : { status: 200 }));
      await endConversation(t);
      await receiver.waitFor(slow.path, 2);
      const stuck = await deliveryOf(slow.id);

      // The retry worker (concurrency 1) is now busy for 10 s; a first attempt elsewhere goes through meanwhile.
      const other = await makeTenant(api.app);
      const fast = await hook(other, 'fast');
      await endConversation(other);
      await receiver.waitFor(fast.path, 1, 5000);
      expect(await attemptsOf(stuck.id)).toHaveLength(1);

      const [, timedOut] = await until(
        async () => {
          const log = await attemptsOf(stuck.id);
          return log.length >= 2 ? log : undefined;
        },
        'the timed-out attempt',
        20_000,
      );
      expect(timedOut).toMatchObject({ number: 2, succeeded: false, status: null, error: 'no answer within 10 seconds' });
      expect(timedOut.duration_ms).toBeGreaterThanOrEqual(10_000);
      await until(async () => (await deliveryOf(slow.id)).state === 'delivered', 'the third attempt');
    },
    SLOW,
  );
});
