import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { INestApplicationContext } from '@nestjs/common';
import { Clock, DomainError } from '@kernel/core';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { GroupEntity } from '@features/groups';
import { OrganisationsService } from '@features/organisations';
import { PersonEntity } from '@features/people';
import { getQueueToken } from '@nestjs/bullmq';
import { MAINTENANCE_JOBS, QUEUES, SCHEDULES } from '@kernel/queue';
import { Queue } from 'bullmq';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { DeliveryQueues, OutboxRelayLoop, WebhookMaintenanceJobs } from '@features/webhooks/worker';
import { DeliveryLogService, DeliveryRetentionService } from '@features/webhooks';
import { makeTenant, Tenant, TestApi } from './support/api';
import { MailCatcher } from './support/mail-catcher';
import { WebhookReceiver } from './support/webhook-receiver';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';
import { until } from './support/until';

const SLOW = 90_000;
const DAY = 86_400_000;

/** The contract's own timetable here (no scaling): a failed delivery waits a real minute for its retry. */
describe('Webhooks: switch-off, the delivery log, resend, recovery and the 90-day sweep', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let worker: INestApplicationContext;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let mail: MailCatcher;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    stand = await startWebhookStand({}, { mail: true });
    ({ api, worker, receiver, db } = stand);
    mail = stand.mail!;
  }, SLOW);
  afterAll(() => stand?.close(), SLOW);
  afterEach(() => jest.restoreAllMocks());

  const hook = (t: Tenant, label: string) => stand.hook(t, label);
  const endConversation = async (t: Tenant) => {
    const ingest = api.app.get(ConversationIngestService);
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest.start(c.id, 'en', 'de');
    await ingest.appendTurn(conv.id, { speaker: 'a', language: 'en', text: 'hello', translation: 'hallo' });
    return ingest.end(conv.id);
  };
  const stateOf = async (webhookId: string, state: string) =>
    until(async () => {
      const [row] = await db.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC LIMIT 1`, [webhookId]);
      return row?.state === state ? row : undefined;
    }, `a delivery of webhook ${webhookId} in state ${state}`);
  const seedDelivery = async (t: Tenant, webhookId: string, fields: Record<string, unknown>) => {
    const id = randomBytes(16).toString('hex');
    const row = { state: 'queued', attempts: 0, next_attempt_at: new Date(), finished_at: null, give_up_reason: null, created_at: new Date(), ...fields };
    await db.query(
      `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, attempts, next_attempt_at, finished_at, give_up_reason, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'conversation.ended', $5, $6, $7, $8, $9, $10, $11, $5, $5)`,
      [
        id,
        webhookId,
        t.organisationId,
        t.connectionId,
        row.created_at,
        JSON.stringify({ conversation_id: 'a'.repeat(32) }),
        row.state,
        row.attempts,
        row.next_attempt_at,
        row.finished_at,
        row.give_up_reason,
      ],
    );
    return id;
  };
  const rejection = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  };

  describe('switch-off after three days of failures', () => {
    it(
      'switches the webhook off, gives up its waiting deliveries and emails every integration manager',
      async () => {
        const t = await makeTenant(api.app);
        const groups = db.getRepository(GroupEntity);
        const people = db.getRepository(PersonEntity);
        const group = async (permissions: string[]) => groups.save(groups.create({ organisationId: t.organisationId, name: `G ${rand()}`, permissions }));
        const person = async (groupId: string, extra: Partial<PersonEntity> = {}) =>
          people.save(
            people.create({ organisationId: t.organisationId, email: `p-${rand()}@org.example`, name: 'P', groupId, joinedAt: new Date(), ...extra }),
          );
        const manager = await person((await group(['integrations.manage'])).id);
        const owner = await person((await group(['organisation.own'])).id);
        const peopleManager = await person((await group(['people.manage'])).id);
        const disabled = await person((await group(['integrations.manage'])).id, { disabled: true });

        const failing = await hook(t, 'failing');
        receiver.reply(failing.path, { status: 500 });
        const recovering = await hook(t, 'recovering');
        await endConversation(t);
        const first = await stateOf(failing.id, 'waiting');
        const [attempt] = await db.query(`SELECT attempted_at FROM webhook_delivery_attempts WHERE delivery_id = $1`, [first.id]);
        const [{ failing_since: since }] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [failing.id]);
        expect(since).toEqual(attempt.attempted_at);
        await stateOf(recovering.id, 'delivered');
        // A run of failures that a success ended: it must not count.
        await db.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1`, [recovering.id]);

        const clock = worker.get(Clock);
        const jobs = worker.get(WebhookMaintenanceJobs);
        jest.spyOn(clock, 'now').mockReturnValue(new Date(since.getTime() + 3 * DAY - 60_000));
        await jobs.run(MAINTENANCE_JOBS.switchOffFailingWebhooks);
        expect((await db.query(`SELECT switched_off_at FROM webhooks WHERE id = $1`, [failing.id]))[0].switched_off_at).toBeNull();

        const at = new Date(since.getTime() + 3 * DAY + 1000);
        jest.spyOn(clock, 'now').mockReturnValue(at);
        expect(await jobs.run(MAINTENANCE_JOBS.switchOffFailingWebhooks)).toBeGreaterThanOrEqual(1);
        jest.restoreAllMocks();
        const [off] = await db.query(`SELECT switched_off_at FROM webhooks WHERE id = $1`, [failing.id]);
        expect(off.switched_off_at).toEqual(at);
        expect((await db.query(`SELECT switched_off_at FROM webhooks WHERE id = $1`, [recovering.id]))[0].switched_off_at).toBeNull();
        const [given] = await db.query(`SELECT state, give_up_reason FROM webhook_deliveries WHERE id = $1`, [first.id]);
        expect(given).toEqual({ state: 'given_up', give_up_reason: 'webhook_switched_off' });
        const shown = await api.http().get(`/v1/webhooks/${failing.id}`).set(t.auth);
        expect(shown.body.data.switched_off_at).toBe(at.toISOString());

        for (const to of [manager.email, owner.email]) {
          // The first run (failing for more than 24 hours) warned them; the second switched it off.
          const [warning, m] = await mail.waitForCount(to, 2);
          expect(warning.subject).toBe(`Webhook failing: ${failing.url}`);
          expect(m.subject).toBe(`Webhook switched off: ${failing.url}`);
          expect(m.text).toContain(failing.url);
          expect(m.text).toContain(since.toISOString());
        }
        await new Promise((r) => setTimeout(r, 200));
        expect(mail.to(peopleManager.email)).toHaveLength(0);
        expect(mail.to(disabled.email)).toHaveLength(0);

        // Once off, no event is sent to it (and a second run switches nothing again, mails nobody again).
        await jobs.run(MAINTENANCE_JOBS.switchOffFailingWebhooks);
        expect(mail.to(manager.email)).toHaveLength(2);
        await endConversation(t);
        await stateOf(recovering.id, 'delivered');
        await new Promise((r) => setTimeout(r, 300));
        const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [failing.id]);
        expect(n).toBe(1);
      },
      SLOW,
    );
  });

  describe('the delivery log and resend', () => {
    it("lists a webhook's deliveries with their attempts, newest first, by cursor", async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'log');
      for (let i = 0; i < 3; i++) await endConversation(t);
      await receiver.waitFor(w.path, 3);
      await until(
        async () => (await db.query(`SELECT 1 FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [w.id])).length === 3,
        'three delivered',
      );
      const log = worker.get(DeliveryLogService);
      const first = await log.list(w.id, { limit: 2 });
      expect(first.items).toHaveLength(2);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await log.list(w.id, { limit: 2, cursor: first.nextCursor! });
      expect(second.items).toHaveLength(1);
      expect(second.nextCursor).toBeNull();
      const all = [...first.items, ...second.items];
      expect(all.map((i) => i.delivery.createdAt.getTime())).toEqual([...all.map((i) => i.delivery.createdAt.getTime())].sort((a, b) => b - a));
      for (const item of all) {
        expect(item.delivery).toMatchObject({ webhookId: w.id, state: 'delivered', series: 1, attempts: 1 });
        expect(item.attempts).toEqual([expect.objectContaining({ series: 1, number: 1, succeeded: true, status: 200, error: null })]);
      }
      expect((await rejection(log.list('999999999'))).code).toBe('not_found');
      expect((await rejection(log.list(w.id, {}, String(Number(t.organisationId) + 100000)))).code).toBe('not_found');
      expect((await log.list(w.id, {}, t.organisationId)).items).toHaveLength(3);
    });

    it('resends a delivery: a new series of attempts for the same delivery id', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'resend');
      await endConversation(t);
      const [firstTime] = await receiver.waitFor(w.path, 1);
      const delivered = await stateOf(w.id, 'delivered');
      const log = worker.get(DeliveryLogService);
      const again = await log.resend(delivered.id);
      expect(again).toMatchObject({ id: delivered.id, state: 'queued', series: 2, attempts: 0 });
      const [, secondTime] = await receiver.waitFor(w.path, 2);
      expect(JSON.parse(secondTime.raw)).toEqual(JSON.parse(firstTime.raw));
      await until(async () => (await log.get(delivered.id)).delivery.state === 'delivered', 'the resend to be delivered');
      const { delivery, attempts } = await log.get(delivered.id);
      expect(delivery).toMatchObject({ series: 2, attempts: 1, state: 'delivered' });
      expect(attempts.map((a) => [a.series, a.number, a.succeeded])).toEqual([
        [1, 1, true],
        [2, 1, true],
      ]);
    });

    it('the admin CLI lists the log and resends (webhook deliveries / webhook resend)', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'cli');
      await endConversation(t);
      await receiver.waitFor(w.path, 1);
      const delivered = await stateOf(w.id, 'delivered');
      const cli = async (...args: string[]) => {
        const { stdout } = await promisify(execFile)(process.execPath, ['dist/apps/admin/src/main.js', ...args, '--json'], { env: process.env });
        return JSON.parse(stdout);
      };
      const listed = await cli('webhook', 'deliveries', w.id);
      expect(listed).toEqual({
        deliveries: [
          expect.objectContaining({ id: delivered.id, event: 'conversation.ended', state: 'delivered', series: 1, attempts: 1, give_up_reason: null }),
        ],
        next_cursor: null,
      });
      expect(listed.deliveries[0].attempt_log).toEqual([expect.objectContaining({ series: 1, number: 1, succeeded: true, status: 200, error: null })]);
      expect(await cli('webhook', 'resend', delivered.id)).toEqual({ id: delivered.id, state: 'queued', series: 2 });
      await receiver.waitFor(w.path, 2);
    });

    it("a resent delivery meets the checks again: a removed webhook's is given up at once, with nothing sent", async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'resend-removed');
      await endConversation(t);
      const delivered = await stateOf(w.id, 'delivered');
      expect((await api.http().delete(`/v1/webhooks/${w.id}`).set(t.auth)).status).toBe(204);
      await worker.get(DeliveryLogService).resend(delivered.id);
      const given = await stateOf(w.id, 'given_up');
      expect(given).toMatchObject({ id: delivered.id, series: 2, give_up_reason: 'webhook_removed' });
      expect(receiver.received(w.path)).toHaveLength(1);
    });

    it('refuses to resend a pending delivery or a test, and does not know deliveries of another organisation', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'resend-refused');
      const pending = await seedDelivery(t, w.id, { state: 'waiting', attempts: 1, next_attempt_at: new Date(Date.now() + 3_600_000) });
      const log = worker.get(DeliveryLogService);
      const busy = await rejection(log.resend(pending));
      expect([busy.code, busy.message]).toEqual([
        'validation_failed',
        'delivery: is still being attempted; resend it once it is delivered, failed or given up',
      ]);
      const test = await api.http().post(`/v1/webhooks/${w.id}/test`).set(t.auth);
      const testResend = await rejection(log.resend(test.body.data.delivery_id));
      expect(testResend.message).toContain('test delivery');
      expect((await rejection(log.resend('f'.repeat(32)))).code).toBe('not_found');
      expect((await rejection(log.resend('nope'))).code).toBe('not_found');
      const [other] = [await makeTenant(api.app)];
      expect((await rejection(log.resend(pending, other.organisationId))).code).toBe('not_found');
    });
  });

  describe('recovery', () => {
    it('queues again a pending delivery whose job was lost, first attempt or retry, under its own id', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'lost');
      const lostFirst = await seedDelivery(t, w.id, { next_attempt_at: new Date(Date.now() - 120_000), created_at: new Date(Date.now() - 120_000) });
      const lostRetry = await seedDelivery(t, w.id, { state: 'waiting', attempts: 2, next_attempt_at: new Date(Date.now() - 120_000) });
      const notYet = await seedDelivery(t, w.id, { state: 'waiting', attempts: 1, next_attempt_at: new Date(Date.now() + 3_600_000) });
      expect(await worker.get(OutboxRelayLoop).recover()).toBeGreaterThanOrEqual(2);
      await receiver.waitFor(w.path, 2);
      const ids = receiver
        .received(w.path)
        .map((r) => JSON.parse(r.raw).id)
        .sort();
      expect(ids).toEqual([lostFirst, lostRetry].sort());
      await until(async () => (await worker.get(DeliveryLogService).get(lostRetry)).delivery.state === 'delivered', 'the recovered retry');
      expect((await worker.get(DeliveryLogService).get(lostRetry)).attempts.map((a) => a.number)).toEqual([3]);
      expect((await worker.get(DeliveryLogService).get(notYet)).delivery.state).toBe('waiting');
    });

    it('brings a stale retry job forward when a delivery must be attempted sooner', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, 'stale');
      const id = await seedDelivery(t, w.id, { state: 'waiting', attempts: 1, next_attempt_at: new Date() });
      const queues = worker.get(DeliveryQueues);
      await queues.retries.add('deliver', { deliveryId: id }, { jobId: id, delay: 3_600_000, removeOnComplete: true, removeOnFail: true });
      await queues.retry(id, 0);
      await receiver.waitFor(w.path, 1);
    });
  });

  describe('the 90-day sweep', () => {
    it(
      'deletes delivered, failed and given-up deliveries (and their attempts) older than 90 days, in batches, safely twice at once',
      async () => {
        const t = await makeTenant(api.app);
        const w = await hook(t, 'sweep');
        const old = 2300;
        await db.query(
          `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, attempts, finished_at, give_up_reason, created_at, updated_at)
         SELECT md5(random()::text || i), $1, $2, $3, 'conversation.ended', now() - interval '95 days', '{}',
                (ARRAY['delivered', 'failed', 'given_up'])[1 + i % 3], 1, now() - interval '91 days',
                CASE WHEN i % 3 = 2 THEN 'webhook_removed' END, now() - interval '95 days', now() - interval '91 days'
           FROM generate_series(1, $4::int) AS i`,
          [w.id, t.organisationId, t.connectionId, old],
        );
        await db.query(
          `INSERT INTO webhook_delivery_attempts (delivery_id, series, number, attempted_at, succeeded, status, duration_ms)
         SELECT id, 1, 1, created_at, state = 'delivered', 200, 5 FROM webhook_deliveries WHERE webhook_id = $1`,
          [w.id],
        );
        const recent = await seedDelivery(t, w.id, {
          state: 'delivered',
          attempts: 1,
          next_attempt_at: null,
          finished_at: new Date(Date.now() - 89 * DAY),
          created_at: new Date(Date.now() - 89 * DAY),
        });
        const pendingOld = await seedDelivery(t, w.id, {
          state: 'waiting',
          attempts: 3,
          created_at: new Date(Date.now() - 100 * DAY),
          next_attempt_at: new Date(Date.now() + DAY),
        });
        // A removed webhook whose log is all older than 90 days goes too.
        const gone = await hook(t, 'sweep-removed');
        await seedDelivery(t, gone.id, { state: 'delivered', attempts: 1, next_attempt_at: null, finished_at: new Date(Date.now() - 91 * DAY) });
        await db.query(`UPDATE webhooks SET deleted_at = now() - interval '91 days' WHERE id = $1`, [gone.id]);

        // Outbox rows: relayed 91 days ago (swept) and relayed yesterday (kept).
        const outbox = await db.query(
          `INSERT INTO outbox_events (organisation_id, event, data, relayed_at)
         VALUES ($1, 'conversation.ended', '{}', now() - interval '91 days'), ($1, 'conversation.ended', '{}', now() - interval '1 day')
         RETURNING id`,
          [t.organisationId],
        );

        const retention = worker.get(DeliveryRetentionService);
        const [a, b] = await Promise.all([retention.sweep(1000), retention.sweep(1000)]);
        const outboxLeft = await db.query(`SELECT id FROM outbox_events WHERE id = ANY($1::uuid[])`, [outbox.map((r: { id: string }) => r.id)]);
        expect(outboxLeft).toEqual([{ id: outbox[1].id }]);
        expect(a + b).toBe(old + 1);
        const left = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id IN ($1, $2) ORDER BY id`, [w.id, gone.id]);
        expect(left.map((r: { id: string }) => r.id)).toEqual([recent, pendingOld].sort());
        const [{ n }] = await db.query(
          `SELECT count(*)::int AS n FROM webhook_delivery_attempts a WHERE NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)`,
        );
        expect(n).toBe(0);
        expect(await db.query(`SELECT id FROM webhooks WHERE id = $1`, [gone.id])).toEqual([]);
        expect(await db.query(`SELECT id FROM webhooks WHERE id = $1`, [w.id])).toEqual([{ id: w.id }]);
        expect(await worker.get(WebhookMaintenanceJobs).run(MAINTENANCE_JOBS.sweepDeliveries)).toBe(0);
      },
      SLOW,
    );

    it('is scheduled daily in Redis, beside the switch-off check and the relay watchdog', async () => {
      const maintenance = worker.get<Queue>(getQueueToken(QUEUES.maintenance), { strict: false });
      const byKey = Object.fromEntries((await maintenance.getJobSchedulers()).map((s) => [s.key, Number(s.every)]));
      for (const s of SCHEDULES.filter((x) => x.queue === QUEUES.maintenance)) expect(byKey[s.job]).toBe(s.every);
      expect(byKey[MAINTENANCE_JOBS.sweepDeliveries]).toBe(DAY);
    });
  });

  it('a module switched off and on again does not resend what was given up meanwhile', async () => {
    const t = await makeTenant(api.app);
    const w = await hook(t, 'module');
    await api.app.get(OrganisationsService).setModule(t.organisationId, false);
    await endConversation(t);
    const given = await stateOf(w.id, 'given_up');
    expect(given.give_up_reason).toBe('integrations_module_off');
    await api.app.get(OrganisationsService).setModule(t.organisationId, true);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received(w.path)).toHaveLength(0);
  });
});
