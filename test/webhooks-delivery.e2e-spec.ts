import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Scope, SCOPES } from '@kernel/core';
import { TransactionHost, PreparedStatements } from '@kernel/database';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { CasesService } from '@features/cases';
import { ConversationIngestService } from '@features/conversations';
import { OrganisationsService } from '@features/organisations';
import { Outbox } from '@kernel/events';
import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { DeliveryQueues } from '@features/webhooks/worker';
import { AddressPolicy, HostResolver, OutboxRelayService, verifySignature, WebhookSender, WebhookTls } from '@features/webhooks';
import { makeTenant, Tenant, TestApi } from './support/api';
import { MailCatcher } from './support/mail-catcher';
import { RECEIVER_DOMAIN, ReceivedRequest, WebhookReceiver } from './support/webhook-receiver';
import { startWebhookWorker } from './support/webhook-worker';
import { MadeHook, startWebhookStand, WebhookStand } from './support/webhook-stand';
import { until } from './support/until';

type Res = { status: number; body: any };
const stripe = new Stripe('sk_test_unused');
const SLOW = 60_000;
const WORDS = 'the patient said something private';

describe('Webhooks: delivery by the worker', () => {
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

  const hook = (t: Tenant, events: string[], label = 'd'): Promise<MadeHook> => stand.hook(t, label, events);
  const ingest = () => api.app.get(ConversationIngestService);
  const conversation = async (t: Tenant, turns = 1) => {
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest().start(c.id, 'en', 'es');
    for (let i = 0; i < turns; i++)
      await ingest().appendTurn(conv.id, { speaker: 'patient', language: 'en', text: WORDS, translation: 'el paciente dijo algo' });
    return conv;
  };
  const endConversation = async (t: Tenant) => {
    const conv = await conversation(t);
    return ingest().end(conv.id);
  };
  const deliveries = (webhookId: string) =>
    db.query(`SELECT id, event, state, attempts, give_up_reason, data FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at, id`, [webhookId]);
  const attempts = (deliveryId: string) =>
    db.query(`SELECT number, succeeded, status, error, attempted_at, duration_ms FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id`, [
      deliveryId,
    ]);
  const expectSigned = (got: ReceivedRequest, secret: string) => {
    const header = got.headers['service-signature'] as string;
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(header, got.raw, secret)).toBe(true);
    expect(stripe.webhooks.signature!.verifyHeader(got.raw, header, secret, 300)).toBe(true);
  };

  describe('each event arrives after the change that causes it, signed, with ids only', () => {
    it('conversation.ended, once the conversation has a turn', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['conversation.ended']);
      const silent = await conversation(t, 0);
      await ingest().end(silent.id);
      const ended = await endConversation(t);
      const [got] = await receiver.waitFor(w.path);
      expect(got.headers['content-type']).toBe('application/json');
      const body = JSON.parse(got.raw);
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{32}$/),
        event: 'conversation.ended',
        occurred_at: ended.endedAt!.toISOString(),
        data: { conversation_id: ended.id },
      });
      expect(Object.keys(body)).toEqual(['id', 'event', 'occurred_at', 'data']);
      expect(got.raw).not.toContain('patient');
      expectSigned(got, w.secret);
      const [d] = await until(async () => ((await deliveries(w.id))[0]?.state === 'delivered' ? deliveries(w.id) : undefined), 'the delivery to be logged');
      expect(d).toMatchObject({ id: body.id, state: 'delivered', attempts: 1 });
      expect(await attempts(d.id)).toEqual([
        { number: 1, succeeded: true, status: 200, error: null, attempted_at: expect.any(Date), duration_ms: expect.any(Number) },
      ]);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received(w.path)).toHaveLength(1);
    });

    it('summary.ready, each time the summary is written or rewritten', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['summary.ready']);
      const conv = await conversation(t);
      await ingest().writeSummary(conv.id, `Summary: ${WORDS}`);
      await ingest().writeSummary(conv.id, `Rewritten: ${WORDS}`);
      const got = await receiver.waitFor(w.path, 2);
      const bodies = got.map((g) => JSON.parse(g.raw));
      expect(bodies.map((b) => [b.event, b.data])).toEqual([
        ['summary.ready', { conversation_id: conv.id }],
        ['summary.ready', { conversation_id: conv.id }],
      ]);
      expect(bodies[0].id).not.toBe(bodies[1].id);
      for (const g of got) {
        expect(g.raw).not.toContain('Summary');
        expectSigned(g, w.secret);
      }
    });

    it('user.joined, when a person invited through the API accepts', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['user.joined']);
      const email = `joiner-${rand()}@elsewhere.example`;
      const invited = (await api.http().post('/v1/users').set(t.auth).send({ email, name: 'Joiner' })) as unknown as Res;
      expect(invited.status).toBe(202);
      const token = /token=([A-Za-z0-9_-]{43})/.exec((await mail.waitFor(email)).text)![1];
      const accepted = await api.http().post('/invitations/accept').type('form').send({ token, name: 'Joiner' });
      expect(accepted.status).toBe(200);
      const [got] = await receiver.waitFor(w.path);
      const [person] = await db.query(`SELECT id FROM people WHERE lower(email) = lower($1)`, [email]);
      expect(JSON.parse(got.raw)).toMatchObject({ event: 'user.joined', data: { user_id: String(person.id) } });
      expectSigned(got, w.secret);
    });

    it('only to active webhooks of live connections of the organisation that subscribe and hold the scope', async () => {
      const t = await makeTenant(api.app);
      const orgConnection = async (scopes: readonly Scope[]) => {
        const conn = await api.app.get(ConnectionsService).create(t.organisationId, `c-${rand()}`, [...scopes]);
        const key = await api.app.get(ApiKeysService).create(conn.id);
        return { ...t, connectionId: conn.id, key: key.key, auth: { Authorization: `Bearer ${key.key}` } };
      };
      const subscribed = await hook(t, ['conversation.ended', 'summary.ready'], 'yes');
      const otherEvent = await hook(t, ['summary.ready'], 'other-event');
      const sibling = await orgConnection(SCOPES);
      const siblingHook = await hook(sibling, ['conversation.ended'], 'sibling');
      const losesScope = await orgConnection(SCOPES);
      const losesScopeHook = await hook(losesScope, ['conversation.ended'], 'lost-scope');
      await api.app.get(ConnectionsService).setScopes(
        losesScope.connectionId,
        SCOPES.filter((s) => s !== 'conversations:read'),
      );
      const revoked = await orgConnection(SCOPES);
      const revokedHook = await hook(revoked, ['conversation.ended'], 'revoked');
      await api.app.get(ConnectionsService).revoke(revoked.connectionId);
      const switchedOff = await hook(t, ['conversation.ended'], 'off');
      await db.query(`UPDATE webhooks SET switched_off_at = now() WHERE id = $1`, [switchedOff.id]);
      const removed = await hook(t, ['conversation.ended'], 'removed');
      expect((await api.http().delete(`/v1/webhooks/${removed.id}`).set(t.auth)).status).toBe(204);
      const elsewhere = await makeTenant(api.app);
      const elsewhereHook = await hook(elsewhere, ['conversation.ended'], 'elsewhere');

      const ended = await endConversation(t);
      const [a] = await receiver.waitFor(subscribed.path);
      const [b] = await receiver.waitFor(siblingHook.path);
      expect(JSON.parse(a.raw).data).toEqual({ conversation_id: ended.id });
      expect(JSON.parse(b.raw).data).toEqual({ conversation_id: ended.id });
      expect(JSON.parse(a.raw).id).not.toBe(JSON.parse(b.raw).id);
      expectSigned(b, siblingHook.secret);
      await new Promise((r) => setTimeout(r, 300));
      for (const w of [otherEvent, losesScopeHook, revokedHook, switchedOff, removed, elsewhereHook]) {
        expect({ path: w.path, got: receiver.received(w.path).length, made: (await deliveries(w.id)).length }).toEqual({ path: w.path, got: 0, made: 0 });
      }
    });
  });

  describe('the attempt', () => {
    it('pins the vetted address while SNI and Host stay the name', async () => {
      const t = await makeTenant(api.app);
      const host = `pinned-${rand()}.${RECEIVER_DOMAIN}`;
      const url = `https://${host}/pinned-${rand()}`;
      const spy = jest.spyOn(worker.get(HostResolver), 'resolve').mockImplementation(async (h) => (h === host ? [{ address: '127.0.0.1', family: 4 }] : []));
      const res = (await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url, events: ['conversation.ended'] })) as unknown as Res;
      await endConversation(t);
      const [got] = await receiver.waitFor(new URL(url).pathname);
      expect(got.servername).toBe(host);
      expect(got.headers.host).toBe(host);
      expect(spy).toHaveBeenCalledWith(host);
      expectSigned(got, res.body.data.secret);
    });

    it('logs an attempt once when its record is sent again after a commit whose answer was lost', async () => {
      const t = await makeTenant(api.app);
      const h = await hook(t, ['conversation.ended'], 'lost-answer');
      // The pool the worker's hot statements (the record among them) go through.
      const pool = (worker.get(PreparedStatements) as unknown as { pool: { query: (...args: unknown[]) => Promise<unknown> } }).pool;
      const real = pool.query.bind(pool);
      let lost = 0;
      // The first record statement commits, then its answer is lost (as when the connection drops right after the commit).
      let again = 0;
      jest.spyOn(pool, 'query').mockImplementation(async (...args: unknown[]) => {
        const q = args[0] as { name?: string; text?: string } | string;
        const isRecord = (typeof q === 'string' ? q : (q.text ?? '')).includes('INSERT INTO webhook_delivery_attempts');
        const out = await real(...args);
        if (isRecord && lost === 0) {
          lost++;
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
        }
        if (isRecord) again++; // the same record, sent again, went through
        return out;
      });
      await endConversation(t);
      await receiver.waitFor(h.path);
      const [d] = await until(async () => {
        const rows = await deliveries(h.id);
        return rows[0]?.state === 'delivered' ? rows : null;
      }, 'the delivery recorded as delivered');
      expect(lost).toBe(1);
      await until(async () => again >= 1, 'the record sent again');
      const logged = await attempts(d.id);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ number: 1, succeeded: true });
      expect(d.attempts).toBe(1);
    });

    it('looks the name up at every attempt: when any address is not public, nothing is sent and the attempt fails with the reason', async () => {
      const t = await makeTenant(api.app);
      const host = `rebound-${rand()}.${RECEIVER_DOMAIN}`;
      const path = `/rebound-${rand()}`;
      const res = (await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: `https://${host}${path}`, events: ['conversation.ended'] })) as unknown as Res;
      expect(res.status).toBe(201);
      jest.spyOn(worker.get(HostResolver), 'resolve').mockImplementation(async () => [
        { address: '127.0.0.1', family: 4 },
        { address: '192.168.3.3', family: 4 },
      ]);
      await endConversation(t);
      const [d] = await until(async () => {
        const rows = await deliveries(res.body.data.id);
        return rows[0]?.state === 'waiting' ? rows : undefined;
      }, 'the failed attempt');
      const [a] = await attempts(d.id);
      expect(a).toMatchObject({ number: 1, succeeded: false, status: null });
      expect(a.error).toBe(`${host} resolves to an address that is not public; nothing was sent`);
      expect(receiver.received(path)).toHaveLength(0);
    });

    it.each([
      [302, 'answered 302, a redirect; redirects are not followed'],
      [404, 'answered 404'],
      [500, 'answered 500'],
    ])('a %s is a failure: logged, and the next attempt is due one minute later', async (status, error) => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['conversation.ended'], `status${status}`);
      receiver.reply(w.path, { status, headers: status === 302 ? { location: `${w.path}-followed` } : {} });
      await endConversation(t);
      const [d] = await until(async () => {
        const rows = await deliveries(w.id);
        return rows[0]?.state === 'waiting' ? rows : undefined;
      }, 'the failed attempt');
      const [a] = await attempts(d.id);
      expect(a).toMatchObject({ number: 1, succeeded: false, status, error });
      const [{ next }] = await db.query(`SELECT next_attempt_at AS next FROM webhook_deliveries WHERE id = $1`, [d.id]);
      const gap = next.getTime() - (a.attempted_at.getTime() + a.duration_ms);
      expect(gap).toBeGreaterThanOrEqual(60_000 - 2);
      expect(gap).toBeLessThanOrEqual(60_000 + 50);
      const job = await worker.get(DeliveryQueues).retries.getJob(d.id);
      expect(await job?.getState()).toBe('delayed');
      expect(job?.data).toEqual({ deliveryId: d.id });
      expect(receiver.received(`${w.path}-followed`)).toHaveLength(0);
      const [hook_] = await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [w.id]);
      expect(hook_.failing_since).toEqual(a.attempted_at);
    });

    it('verifies the receiver certificate: without trusting it, nothing is delivered', async () => {
      const untrusting = new WebhookSender(worker.get(HostResolver), worker.get(AddressPolicy), new WebhookTls());
      try {
        const result = await untrusting.send({ url: `https://127.0.0.1/untrusted-${rand()}`, body: '{}', secret: 'whsec_x', timestamp: 1 });
        expect(result).toMatchObject({ ok: false, status: null });
        expect(result.error).toMatch(/self-signed certificate/);
      } finally {
        await untrusting.onApplicationShutdown();
      }
    });
  });

  describe('before every attempt', () => {
    const cases: Array<[string, string, (t: Tenant, webhookId: string) => Promise<unknown>]> = [
      ['the connection is revoked', 'connection_revoked', (t) => api.app.get(ConnectionsService).revoke(t.connectionId)],
      ['the webhook is switched off', 'webhook_switched_off', (_t, id) => db.query(`UPDATE webhooks SET switched_off_at = now() WHERE id = $1`, [id])],
      ['the webhook is removed', 'webhook_removed', (_t, id) => db.query(`UPDATE webhooks SET deleted_at = now() WHERE id = $1`, [id])],
      ['the integrations module is off', 'integrations_module_off', (t) => api.app.get(OrganisationsService).setModule(t.organisationId, false)],
      ['the integrations policy is withdrawn', 'integrations_policy_withdrawn', (t) => api.app.get(OrganisationsService).setPolicy(t.organisationId, false)],
      [
        'the connection no longer holds the scope',
        'connection_lacks_scope',
        (t) =>
          api.app.get(ConnectionsService).setScopes(
            t.connectionId,
            SCOPES.filter((s) => s !== 'conversations:read'),
          ),
      ],
    ];

    it.each(cases)('gives the delivery up when %s, with the reason %s, sending nothing', async (_what, reason, change) => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['conversation.ended'], 'giveup');
      // A delivery waiting for its retry (as after a failed first attempt), then the change, then its time comes.
      const id = randomBytes(16).toString('hex');
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, attempts, next_attempt_at)
         VALUES ($1, $2, $3, $4, 'conversation.ended', now(), $5, 'waiting', 1, now())`,
        [id, w.id, t.organisationId, t.connectionId, JSON.stringify({ conversation_id: 'f'.repeat(32) })],
      );
      await change(t, w.id);
      await worker.get(DeliveryQueues).retry(id, 0);
      const [d] = await until(async () => {
        const rows = await db.query(`SELECT state, give_up_reason, finished_at, attempts FROM webhook_deliveries WHERE id = $1`, [id]);
        return rows[0].state !== 'waiting' ? rows : undefined;
      }, 'the delivery to be given up');
      expect(d).toMatchObject({ state: 'given_up', give_up_reason: reason, attempts: 1, finished_at: expect.any(Date) });
      expect(await attempts(id)).toEqual([]);
      expect(receiver.received(w.path)).toHaveLength(0);
    });

    it('a switched-off webhook still gets its tests: only its deliveries are given up', async () => {
      const t = await makeTenant(api.app);
      const w = await hook(t, ['conversation.ended'], 'off-test');
      await db.query(`UPDATE webhooks SET switched_off_at = now() WHERE id = $1`, [w.id]);
      const res = (await api.http().post(`/v1/webhooks/${w.id}/test`).set(t.auth)) as unknown as Res;
      expect(res.body.data.delivered).toBe(true);
    });
  });

  describe('the relay', () => {
    it(
      'turns each outbox row into its deliveries exactly once with two workers relaying at the same time (row locking)',
      async () => {
        const replica = await startWebhookWorker(AppConfig.fromEnv({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0' }), receiver.cert);
        try {
          const tenants = [await makeTenant(api.app), await makeTenant(api.app)];
          const hooks = [
            await hook(tenants[0], ['conversation.ended'], 'x1'),
            await hook(tenants[0], ['conversation.ended'], 'x2'),
            await hook(tenants[1], ['conversation.ended'], 'x3'),
          ];
          const relayed: number[] = [];
          for (const app of [worker, replica]) {
            const relay = app.get(OutboxRelayService);
            const real = relay.relayBatch.bind(relay);
            jest.spyOn(relay, 'relayBatch').mockImplementation(async (limit) => {
              const r = await real(limit);
              relayed.push(r.events);
              return r;
            });
          }
          const perTenant = 150;
          const outbox = api.app.get(Outbox);
          const tx = api.app.get(TransactionHost);
          // Many small commits: every one wakes both relays.
          for (let i = 0; i < perTenant; i += 10) {
            for (const t of tenants) {
              await tx.run(async (m) => {
                for (let j = 0; j < 10; j++) await outbox.emit(m, t.organisationId, 'conversation.ended', { conversation_id: randomBytes(16).toString('hex') });
              });
            }
          }
          const expected = { [hooks[0].path]: perTenant, [hooks[1].path]: perTenant, [hooks[2].path]: perTenant };
          for (const [path, n] of Object.entries(expected)) await receiver.waitFor(path, n, 30_000);
          await new Promise((r) => setTimeout(r, 500));
          expect(relayed.reduce((a, b) => a + b, 0)).toBe(perTenant * tenants.length);
          for (const w of hooks) {
            const got = receiver.received(w.path);
            expect(got).toHaveLength(perTenant);
            expect(new Set(got.map((g) => JSON.parse(g.raw).id)).size).toBe(perTenant);
            expect(new Set(got.map((g) => JSON.parse(g.raw).data.conversation_id)).size).toBe(perTenant);
          }
          const [{ pending }] = await db.query(`SELECT count(*)::int AS pending FROM outbox_events WHERE relayed_at IS NULL`);
          expect(pending).toBe(0);
        } finally {
          await replica.close();
        }
      },
      SLOW,
    );
  });
});
