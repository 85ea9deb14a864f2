import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Clock } from '@kernel/core';
import { CasesService } from '@features/cases';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { ConversationIngestService } from '@features/conversations';
import { GroupEntity } from '@features/groups';
import { PersonEntity } from '@features/people';
import { WebhookEnableService, WebhookSwitchOffWarningService } from '@features/webhooks';
import { WebhookMaintenanceJobs } from '@features/webhooks/worker';
import { MAINTENANCE_JOBS } from '@kernel/queue';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, TestApi } from './support/api';
import { MailCatcher } from './support/mail-catcher';
import { OpenApiChecker } from './support/openapi-check';
import { until } from './support/until';
import { Res } from './support/webhook-kit';
import { WebhookReceiver } from './support/webhook-receiver';
import { startWebhookStand, WebhookStand } from './support/webhook-stand';
import { startWebhookWorker } from './support/webhook-worker';
import { holdInside } from './support/hold';

const SLOW = 90_000;
jest.setTimeout(SLOW);
const rand = () => Math.random().toString(36).slice(2, 10);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ENABLE = '/v1/webhooks/{id}/enable';

/**
 * Switching a webhook back on over the API (with and without sending again what was given up),
 * and the warning mailed when a webhook has failed for 24 hours, against the real api, two real
 * workers, a real HTTPS receiver and a real SMTP catcher. Time is moved with the workers' Clock.
 */
describe('Webhooks: switching one back on, and the warning before the switch-off', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let worker: INestApplicationContext;
  let second: INestApplicationContext;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let mail: MailCatcher;
  let checker: OpenApiChecker;

  beforeAll(async () => {
    stand = await startWebhookStand({}, { mail: true });
    ({ api, worker, receiver, db } = stand);
    mail = stand.mail!;
    const settings = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0' };
    second = await startWebhookWorker(AppConfig.fromEnv({ ...settings, SMTP_URL: worker.get(AppConfig).smtpUrl! }), receiver.cert);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, SLOW);
  afterAll(async () => {
    await second?.close();
    await stand?.close();
  }, SLOW);
  afterEach(() => jest.restoreAllMocks());

  const call = (t: Tenant, method: 'get' | 'post', path: string, body?: unknown, key?: string): Promise<Res> => {
    let req = api.http()[method](path).set(t.auth);
    if (key) req = req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  const expectError = (res: Res, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check('POST', ENABLE, status, res.body);
  };
  const endConversation = async (t: Tenant) => {
    const ingest = api.app.get(ConversationIngestService);
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest.start(c.id, 'en', 'de');
    await ingest.appendTurn(conv.id, { speaker: 'a', language: 'en', text: 'hello', translation: 'hallo' });
    return ingest.end(conv.id);
  };
  const delivery = (webhookId: string, state: string, where = 'true') =>
    until(
      async () => {
        const [row] = await db.query(`SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND state = $2 AND ${where} ORDER BY created_at DESC LIMIT 1`, [
          webhookId,
          state,
        ]);
        return row;
      },
      `a ${state} delivery of webhook ${webhookId}`,
      30_000,
    );
  /** A finished delivery row made at a known time (eight real attempts take a day and a half). */
  const row = (t: Tenant, webhookId: string, state: string, madeAt: Date, reason: string | null = null): Promise<string> =>
    db
      .query(
        `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts, give_up_reason, created_at, updated_at, finished_at)
         VALUES (md5(random()::text), $1, $2, $3, 'conversation.ended', $5, '{"case_id":"1"}', $4, 1, 0, $6, $5, $5, $5) RETURNING id`,
        [webhookId, t.organisationId, t.connectionId, state, madeAt, reason],
      )
      .then((r: Array<{ id: string }>) => r[0].id);
  const switchOff = (webhookId: string, at = new Date()) =>
    db.query(`UPDATE webhooks SET switched_off_at = $2, failing_since = $3 WHERE id = $1`, [webhookId, at, new Date(at.getTime() - 3 * DAY)]);
  const managers = async (t: Tenant) => {
    const groups = db.getRepository(GroupEntity);
    const people = db.getRepository(PersonEntity);
    const group = await groups.save(groups.create({ organisationId: t.organisationId, name: `G ${rand()}`, permissions: ['integrations.manage'] }));
    const other = await groups.save(groups.create({ organisationId: t.organisationId, name: `G ${rand()}`, permissions: ['people.manage'] }));
    const person = (groupId: string) =>
      people.save(people.create({ organisationId: t.organisationId, email: `p-${rand()}@org.example`, name: 'P', groupId, joinedAt: new Date() }));
    return { manager: await person(group.id), bystander: await person(other.id) };
  };

  describe('POST /v1/webhooks/{id}/enable', () => {
    it('switches a switched-off webhook back on: a fresh start, events delivered again, nothing resent; again is a 200 that changes nothing', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'enable');
      await switchOff(w.id);
      const given = await row(t, w.id, 'given_up', new Date(Date.now() - HOUR), 'webhook_switched_off');
      // While switched off, an event makes no delivery to it.
      await endConversation(t);

      const res = await call(t, 'post', `/v1/webhooks/${w.id}/enable`);
      expect(res.status).toBe(200);
      checker.check('POST', ENABLE, 200, res.body);
      expect(res.body).toEqual({
        data: {
          webhook: { id: w.id, url: w.url, events: ['conversation.ended'], created_at: expect.any(String), switched_off_at: null },
          switched_on: true,
          recovery: null,
        },
      });
      const [hook] = await db.query(`SELECT switched_off_at, failing_since FROM webhooks WHERE id = $1`, [w.id]);
      expect(hook).toEqual({ switched_off_at: null, failing_since: null });
      expect((await call(t, 'get', `/v1/webhooks/${w.id}`)).body.data.switched_off_at).toBeNull();

      // Events are delivered again; what was given up stays given up.
      await endConversation(t);
      const [got] = await receiver.waitFor(w.path, 1);
      const delivered = await delivery(w.id, 'delivered');
      expect(JSON.parse(got.raw).id).toBe(delivered.id);
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND NOT is_test`, [w.id]);
      expect(n).toBe(2);
      expect((await db.query(`SELECT state, series FROM webhook_deliveries WHERE id = $1`, [given]))[0]).toEqual({ state: 'given_up', series: 1 });

      // Not switched off: 200, nothing changes (a recovery time too is left unused).
      const again = await call(t, 'post', `/v1/webhooks/${w.id}/enable`, { recover_since: new Date(Date.now() - 2 * HOUR).toISOString() });
      expect(again.status).toBe(200);
      checker.check('POST', ENABLE, 200, again.body);
      expect(again.body.data).toMatchObject({ switched_on: false, recovery: null, webhook: { id: w.id, switched_off_at: null } });
      expect((await db.query(`SELECT state FROM webhook_deliveries WHERE id = $1`, [given]))[0].state).toBe('given_up');
    });

    it('with recover_since, sends again the given-up deliveries made since then, and only those; they reach the receiver', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'enable-recover');
      // Switched off for real: a failed attempt leaves a delivery waiting, the switch-off gives it up.
      receiver.reply(w.path, { status: 500 });
      await endConversation(t);
      const waiting = await delivery(w.id, 'waiting');
      const [{ failing_since: since }] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w.id]);
      jest.spyOn(worker.get(WebhookSwitchOffWarningService), 'run').mockResolvedValue(0);
      const clock = worker.get(Clock);
      jest.spyOn(clock, 'now').mockReturnValue(new Date(since.getTime() + 3 * DAY + 1000));
      await worker.get(WebhookMaintenanceJobs).run(MAINTENANCE_JOBS.switchOffFailingWebhooks);
      jest.restoreAllMocks();
      expect((await db.query(`SELECT state, give_up_reason FROM webhook_deliveries WHERE id = $1`, [waiting.id]))[0]).toEqual({
        state: 'given_up',
        give_up_reason: 'webhook_switched_off',
      });
      const recoverSince = new Date(new Date(waiting.created_at).getTime() - 60_000);
      const before = await row(t, w.id, 'given_up', new Date(recoverSince.getTime() - HOUR), 'webhook_switched_off');
      const failed = await row(t, w.id, 'failed', new Date(recoverSince.getTime() + 1000));
      receiver.reply(w.path, { status: 200 });

      const res = await call(t, 'post', `/v1/webhooks/${w.id}/enable`, { recover_since: recoverSince.toISOString() }, `ik-${rand()}`);
      expect(res.status).toBe(200);
      checker.check('POST', ENABLE, 200, res.body);
      expect(res.body.data).toMatchObject({ switched_on: true, recovery: { resent: 1, more: false }, webhook: { switched_off_at: null } });
      await delivery(w.id, 'delivered', `id = '${waiting.id}'`);
      const got = await receiver.waitFor(w.path, 2);
      expect(got.map((r) => JSON.parse(r.raw).id)).toEqual([waiting.id, waiting.id]);
      expect((await db.query(`SELECT state, series FROM webhook_deliveries WHERE id = $1`, [waiting.id]))[0]).toEqual({ state: 'delivered', series: 2 });
      expect((await db.query(`SELECT state FROM webhook_deliveries WHERE id = $1`, [before]))[0].state).toBe('given_up');
      expect((await db.query(`SELECT state FROM webhook_deliveries WHERE id = $1`, [failed]))[0].state).toBe('failed');
    });

    it('refuses a key without webhooks:manage (403), another connection’s, a removed or an unknown webhook (404), a bad recover_since (422); GET is 405', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'enable-refusals');
      await switchOff(w.id);
      const path = `/v1/webhooks/${w.id}/enable`;

      const noScope = await makeTenant(api.app, ['conversations:read']);
      expectError(await call(noScope, 'post', path), 403, 'scope_missing');
      const other = await makeTenant(api.app);
      const conn = await api.app.get(ConnectionsService).create(t.organisationId, 'Second connection', ['webhooks:manage']);
      const sameOrg = { auth: { Authorization: `Bearer ${(await api.app.get(ApiKeysService).create(conn.id)).key}` } } as Tenant;
      for (const who of [other, sameOrg]) expectError(await call(who, 'post', path), 404, 'not_found');
      expectError(await call(t, 'post', '/v1/webhooks/999999999/enable'), 404, 'not_found');
      expectError(await call(t, 'post', '/v1/webhooks/abc/enable'), 404, 'not_found');
      const removed = await stand.hook(t, 'enable-removed');
      await switchOff(removed.id);
      expect((await api.http().delete(`/v1/webhooks/${removed.id}`).set(t.auth)).status).toBe(204);
      expectError(await call(t, 'post', `/v1/webhooks/${removed.id}/enable`), 404, 'not_found');

      const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
      for (const recover_since of ['yesterday', '2026-11-27T08:00:00', '2026-02-30T08:00:00Z', 1, ago(-HOUR), ago(91 * DAY)]) {
        const res = await call(t, 'post', path, { recover_since });
        expectError(res, 422, 'validation_failed');
        expect(res.body.error.message).toMatch(/^recover_since/);
      }
      expectError(await call(t, 'post', path, { recover_since: ago(HOUR), extra: 1 }), 422, 'validation_failed');
      // Each refusal changed nothing.
      expect((await db.query(`SELECT switched_off_at FROM webhooks WHERE id = $1`, [w.id]))[0].switched_off_at).not.toBeNull();
      expect((await call(t, 'get', path)).status).toBe(405);
    });

    it('Idempotency-Key: a replay answers the same, another request with the key 422, the key in use 409', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'enable-ik');
      await switchOff(w.id);
      const path = `/v1/webhooks/${w.id}/enable`;
      const key = `ik-${rand()}`;
      const first = await call(t, 'post', path, {}, key);
      expect(first.status).toBe(200);
      expect(first.body.data.switched_on).toBe(true);
      const replay = await call(t, 'post', path, {}, key);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expectError(await call(t, 'post', path, { recover_since: new Date(Date.now() - HOUR).toISOString() }, key), 422, 'idempotency_key_reused');

      // In progress: the first request is held inside the enabling while the second arrives with its key.
      await switchOff(w.id);
      const { inside, release } = holdInside(api.app.get(WebhookEnableService), 'enable');
      const held = `ik-${rand()}`;
      const firstHeld = Promise.resolve(call(t, 'post', path, {}, held));
      await inside;
      expectError(await call(t, 'post', path, {}, held), 409, 'idempotency_key_in_use');
      release();
      expect((await firstHeld).status).toBe(200);
    });
  });

  describe('the warning after 24 hours of failures', () => {
    it('mails the integration managers once (two workers at once), with the switch-off time and the deliveries page; a new failing period is warned again', async () => {
      const t = await makeTenant(api.app);
      const { manager, bystander } = await managers(t);
      const w = await stand.hook(t, 'warn');
      const since = new Date(Date.now() - HOUR);
      await db.query(`UPDATE webhooks SET failing_since = $2 WHERE id = $1`, [w.id, since]);
      const warnings = [worker.get(WebhookSwitchOffWarningService), second.get(WebhookSwitchOffWarningService)];
      const at = (when: Date) => {
        jest.spyOn(worker.get(Clock), 'now').mockReturnValue(when);
        jest.spyOn(second.get(Clock), 'now').mockReturnValue(when);
      };
      const mine = () => mail.to(manager.email).filter((m) => m.text.includes(w.url));

      at(new Date(since.getTime() + DAY - 60_000));
      await Promise.all(warnings.map((s) => s.run()));
      expect(mine()).toHaveLength(0);

      at(new Date(since.getTime() + DAY + 1000));
      await Promise.all(warnings.map((s) => s.run()));
      await Promise.all(warnings.map((s) => s.run()));
      expect(mine()).toHaveLength(1);
      const [m] = mine();
      const off = new Date(since.getTime() + 3 * DAY).toISOString();
      expect(m.subject).toBe(`Webhook failing: ${w.url}`);
      expect(m.text).toContain(`Failing since: ${since.toISOString()}`);
      expect(m.text).toContain(`To be switched off at: ${off}`);
      const link = `${api.app.get(AppConfig).publicBaseUrl}/console/connections/${t.connectionId}/webhooks/${w.id}/deliveries`;
      expect(m.text).toContain(link);
      expect(mail.to(bystander.email)).toHaveLength(0);
      expect(await db.query(`SELECT count(*)::int AS n FROM webhook_switch_off_warnings WHERE webhook_id = $1`, [w.id])).toEqual([{ n: 1 }]);

      // It recovers (a success clears failing_since), and fails again two days later: a new period, a new warning.
      await db.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1`, [w.id]);
      await Promise.all(warnings.map((s) => s.run()));
      const later = new Date(since.getTime() + 2 * DAY);
      await db.query(`UPDATE webhooks SET failing_since = $2 WHERE id = $1`, [w.id, later]);
      at(new Date(later.getTime() + DAY + 1000));
      await Promise.all(warnings.map((s) => s.run()));
      expect(mine()).toHaveLength(2);
      expect(mine()[1].text).toContain(`Failing since: ${later.toISOString()}`);
      // A webhook already due for the switch-off is not warned (its switch-off mail says it all).
      at(new Date(later.getTime() + 3 * DAY + 1000));
      await db.query(`DELETE FROM webhook_switch_off_warnings WHERE webhook_id = $1`, [w.id]);
      await Promise.all(warnings.map((s) => s.run()));
      expect(mine()).toHaveLength(2);
    });
  });
});
