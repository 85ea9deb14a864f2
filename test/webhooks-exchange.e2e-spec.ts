import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { CasesService } from '@features/cases';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { ConversationIngestService } from '@features/conversations';
import { DeliveryLogService, DeliveryRetentionService, HostResolver, MAX_BULK_RESEND, verifySignature } from '@features/webhooks';
import { DeliveryQueues } from '@features/webhooks/worker';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, TestApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';
import { until } from './support/until';
import { Res } from './support/webhook-kit';
import { RECEIVER_DOMAIN, WebhookReceiver } from './support/webhook-receiver';
import { MadeHook, startWebhookStand, WebhookStand } from './support/webhook-stand';
import { startWebhookWorker } from './support/webhook-worker';
import { holdInside } from './support/hold';

const SLOW = 90_000;
jest.setTimeout(SLOW);

const stripe = new Stripe('sk_test_unused');
const rand = () => Math.random().toString(36).slice(2, 10);
const MIB = 1024 * 1024;

/**
 * The whole exchange of every attempt, kept and served, and a webhook's deliveries over the API
 * (list, one delivery, resend or try now, recover after an outage), against the real api, two
 * real workers and a real HTTPS receiver. The retry timetable is the contract's own (a failed
 * attempt waits a minute), so a delivery waiting for a retry stays waiting until a test moves it.
 */
describe('Webhooks: the exchange of each attempt, and deliveries over the API', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let checker: OpenApiChecker;
  let second: INestApplicationContext;
  const env = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', WORKER_HEALTH_PORT: '0' };

  beforeAll(async () => {
    stand = await startWebhookStand(env);
    ({ api, receiver, db } = stand);
    // A second worker: every new call must hold with two of them listening.
    second = await startWebhookWorker(AppConfig.fromEnv({ ...env }), receiver.cert);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, SLOW);
  afterAll(async () => {
    await second?.close();
    await stand?.close();
  }, SLOW);
  afterEach(() => jest.restoreAllMocks());

  const call = (t: Tenant, method: 'get' | 'post' | 'put' | 'patch', path: string, body?: unknown, key?: string): Promise<Res> => {
    let req = api.http()[method](path).set(t.auth);
    if (key) req = req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  const expectError = (res: Res, status: number, code: string, method: string, template: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check(method, template, status, res.body);
  };
  const endConversation = async (t: Tenant) => {
    const ingest = api.app.get(ConversationIngestService);
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest.start(c.id, 'en', 'fr');
    await ingest.appendTurn(conv.id, { speaker: 'a', language: 'en', text: 'hello', translation: 'bonjour' });
    return ingest.end(conv.id);
  };
  const deliveries = async (hookId: string, state: string, count = 1): Promise<string[]> =>
    until(
      async () => {
        const rows: Array<{ id: string }> = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND state = $2 ORDER BY created_at, id`, [
          hookId,
          state,
        ]);
        return rows.length >= count ? rows.map((r) => r.id) : undefined;
      },
      `${count} ${state} deliveries of webhook ${hookId}`,
      30_000,
    );
  const DELIVERY = '/v1/webhooks/{id}/deliveries/{delivery_id}';
  const LIST = '/v1/webhooks/{id}/deliveries';
  const RESEND = '/v1/webhooks/{id}/deliveries/{delivery_id}/resend';
  const RECOVER = '/v1/webhooks/{id}/recover';
  const getDelivery = async (t: Tenant, w: MadeHook, id: string) => {
    const res = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries/${id}`);
    expect(res.status).toBe(200);
    checker.check('GET', DELIVERY, 200, res.body);
    return res.body.data;
  };
  /** A test call (one attempt, made by the api now); answers the delivery as served. */
  const testCall = async (t: Tenant, w: { id: string }) => {
    const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
    expect(res.status).toBe(200);
    const got = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries/${res.body.data.delivery_id}`);
    expect(got.status).toBe(200);
    checker.check('GET', DELIVERY, 200, got.body);
    return got.body.data;
  };
  const makeHook = async (t: Tenant, url: string) => {
    const res = await call(t, 'post', '/v1/webhooks', { url, events: ['conversation.ended'] });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; url: string; secret: string };
  };
  const resolveAs = (map: Record<string, string[] | Error>) => {
    const resolver = api.app.get(HostResolver);
    const real = resolver.resolve.bind(resolver);
    jest.spyOn(resolver, 'resolve').mockImplementation(async (host) => {
      const to = map[host];
      if (to instanceof Error) throw to;
      return to ? to.map((address) => ({ address, family: 4 as const })) : real(host);
    });
  };

  describe('the exchange of each attempt', () => {
    it('keeps what was sent (headers with the signature, the body once) and what came back, and serves it; the served body and signature verify', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'exchange');
      receiver.reply(w.path, { status: 200, headers: { 'content-type': 'application/json', 'x-receiver': 'seen' }, body: '{"received":true}' });
      await endConversation(t);
      const [got] = await receiver.waitFor(w.path, 1);
      const [id] = await deliveries(w.id, 'delivered');
      const d = await getDelivery(t, w, id);

      expect(d).toMatchObject({ id, webhook_id: w.id, event: 'conversation.ended', state: 'delivered', test: false, series: 1, attempts_in_series: 1 });
      // The body as the receiver got it, byte for byte; the headers as sent.
      expect(d.body).toBe(got.raw);
      expect(d.attempts).toHaveLength(1);
      const [a] = d.attempts;
      expect(a).toMatchObject({ series: 1, number: 1, succeeded: true, status: 200, error: null, error_class: null });
      expect(a.request.headers).toEqual({
        host: '127.0.0.1',
        'content-length': String(Buffer.byteLength(got.raw)),
        'content-type': 'application/json',
        'user-agent': got.headers['user-agent'],
        'service-signature': got.headers['service-signature'],
      });
      for (const [name, value] of Object.entries(a.request.headers)) expect(got.headers[name]).toBe(value);
      // A partner can check a logged attempt with its secret: the served signature covers the served body.
      expect(verifySignature(a.request.headers['service-signature'], d.body, w.secret, { toleranceSeconds: 3600 })).toBe(true);
      expect(stripe.webhooks.signature!.verifyHeader(d.body, a.request.headers['service-signature'], w.secret, 3600)).toBe(true);
      expect(a.response).toEqual({
        headers: expect.objectContaining({ 'content-type': 'application/json', 'x-receiver': 'seen' }),
        body: '{"received":true}',
        body_base64: null,
        body_size: 17,
        body_truncated: false,
      });
      // The secret is nowhere in what is kept.
      const [row] = await db.query(`SELECT row_to_json(a)::text AS kept FROM webhook_delivery_attempts a WHERE delivery_id = $1`, [id]);
      expect(row.kept).not.toContain(w.secret);
      expect(row.kept).not.toContain(w.secret.slice('whsec_'.length));
    });

    it('keeps the first 8 KiB of a 1 MiB answer, marked as cut, with its size; a body that is not text is served as base64', async () => {
      const t = await makeTenant(api.app);
      const big = await makeHook(t, `https://127.0.0.1/big-${rand()}`);
      const text = Buffer.alloc(MIB, 'abcdefghij');
      receiver.reply(new URL(big.url).pathname, { status: 200, headers: { 'content-type': 'text/plain', 'content-length': String(MIB) }, body: text });
      const d = await testCall(t, big);
      const [a] = d.attempts;
      expect(a).toMatchObject({ succeeded: true, status: 200 });
      expect(a.response.body).toBe(text.subarray(0, 8192).toString());
      expect(a.response).toMatchObject({ body_base64: null, body_size: MIB, body_truncated: true });
      const [row] = await db.query(`SELECT octet_length(response_body) AS n FROM webhook_delivery_attempts WHERE delivery_id = $1`, [d.id]);
      expect(row.n).toBe(8192);

      const png = await makeHook(t, `https://127.0.0.1/png-${rand()}`);
      const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]);
      receiver.reply(new URL(png.url).pathname, { status: 400, headers: { 'content-type': 'image/png' }, body: bytes });
      const p = await testCall(t, png);
      expect(p.attempts[0]).toMatchObject({ succeeded: false, status: 400, error_class: 'status' });
      expect(p.attempts[0].response).toMatchObject({ body: null, body_base64: bytes.toString('base64'), body_size: 10, body_truncated: false });
    });

    it('classes each failure: dns, address_not_public, refused, tls, redirect, status', async () => {
      const t = await makeTenant(api.app);
      const host = (label: string) => `${label}-${rand()}.${RECEIVER_DOMAIN}`;
      const dnsHost = host('dns');
      const privateHost = host('private');
      const refusedHost = host('refused');
      const tlsHost = `tls-${rand()}.elsewhere.test`;
      // Made while the names do not resolve (accepted: their deliveries fail until they do); then they resolve as each case needs.
      const [dns, priv, refused, tls] = await Promise.all([dnsHost, privateHost, refusedHost, tlsHost].map((h) => makeHook(t, `https://${h}/x-${rand()}`)));
      const redirect = await makeHook(t, `https://127.0.0.1/redirect-${rand()}`);
      const status = await makeHook(t, `https://127.0.0.1/status-${rand()}`);
      receiver.reply(new URL(redirect.url).pathname, { status: 307, headers: { location: 'https://elsewhere.example/' } });
      receiver.reply(new URL(status.url).pathname, { status: 503, headers: { 'retry-after': '120' }, body: 'busy' });
      resolveAs({
        [dnsHost]: Object.assign(new Error(`getaddrinfo ENOTFOUND ${dnsHost}`), { code: 'ENOTFOUND' }),
        [privateHost]: ['10.0.0.8'],
        // Loopback, allowed here, but nothing listens there.
        [refusedHost]: ['127.0.0.2'],
        // The receiver's certificate does not cover this name.
        [tlsHost]: ['127.0.0.1'],
      });
      const classes: Record<string, unknown> = {};
      for (const [name, hook] of Object.entries({ dns, address_not_public: priv, refused, tls, redirect, status })) {
        const d = await testCall(t, hook);
        const [a] = d.attempts;
        classes[name] = { class: a.error_class, sent: a.request !== null, answered: a.response !== null };
        if (name === 'redirect') expect(a.response.headers.location).toBe('https://elsewhere.example/');
        if (name === 'status') expect(a.response).toMatchObject({ body: 'busy', headers: expect.objectContaining({ 'retry-after': '120' }) });
      }
      expect(classes).toEqual({
        dns: { class: 'dns', sent: false, answered: false },
        address_not_public: { class: 'address_not_public', sent: false, answered: false },
        refused: { class: 'refused', sent: true, answered: false },
        tls: { class: 'tls', sent: true, answered: false },
        redirect: { class: 'redirect', sent: true, answered: true },
        status: { class: 'status', sent: true, answered: true },
      });
    });

    it('classes no whole answer within 10 seconds as timeout', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/timeout-${rand()}`);
      let release!: () => void;
      receiver.reply(new URL(w.url).pathname, { hold: new Promise<void>((r) => (release = r)) });
      try {
        const d = await testCall(t, w);
        expect(d.attempts[0]).toMatchObject({ succeeded: false, status: null, error_class: 'timeout', response: null });
        expect(d.attempts[0].request).not.toBeNull();
      } finally {
        release();
      }
    });

    it('the 90-day sweep takes the exchanges with their attempts', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/sweep-${rand()}`);
      const d = await testCall(t, w);
      expect(
        (await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1 AND request_headers IS NOT NULL`, [d.id]))[0].n,
      ).toBe(1);
      await db.query(`UPDATE webhook_deliveries SET finished_at = now() - interval '91 days' WHERE id = $1`, [d.id]);
      await api.app.get(DeliveryRetentionService).sweep();
      expect((await db.query(`SELECT count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = $1`, [d.id]))[0].n).toBe(0);
    });
  });

  describe('GET /v1/webhooks/{id}/deliveries and /deliveries/{delivery_id}', () => {
    it('lists newest first, cursor-paginated, filtered by state, event and time range', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'list');
      for (let i = 0; i < 3; i++) await endConversation(t);
      const ids = await deliveries(w.id, 'delivered', 3);
      // One test delivery too: made last, newest.
      const test = await testCall(t, w);

      const page1 = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries?limit=2`);
      expect(page1.status).toBe(200);
      checker.check('GET', LIST, 200, page1.body);
      expect(page1.body.data.map((d: { id: string }) => d.id)).toEqual([test.id, ids[2]]);
      expect(page1.body.data[1]).toMatchObject({ state: 'delivered', last_attempt: { number: 1, succeeded: true, status: 200, error_class: null } });
      expect(page1.body.data[1]).not.toHaveProperty('attempts');
      const page2 = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries?limit=2&cursor=${page1.body.next_cursor}`);
      expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([ids[1], ids[0]]);
      expect(page2.body.next_cursor).toBeNull();

      const byEvent = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries?event=webhook.test`);
      expect(byEvent.body.data.map((d: { id: string }) => d.id)).toEqual([test.id]);
      const byState = await call(t, 'get', `/v1/webhooks/${w.id}/deliveries?state=failed`);
      expect(byState.body).toEqual({ data: [], next_cursor: null });

      const made: Array<{ id: string; created_at: Date }> = await db.query(`SELECT id, created_at FROM webhook_deliveries WHERE id = ANY ($1)`, [ids]);
      const at = new Map(made.map((r) => [r.id, r.created_at.toISOString()]));
      const ranged = await call(
        t,
        'get',
        `/v1/webhooks/${w.id}/deliveries?since=${encodeURIComponent(at.get(ids[1])!)}&until=${encodeURIComponent(at.get(ids[2])!)}`,
      );
      expect(ranged.status).toBe(200);
      expect(ranged.body.data.map((d: { id: string }) => d.id)).toEqual(
        [ids[1], ids[0], ids[2]].filter((id) => at.get(id)! >= at.get(ids[1])! && at.get(id)! < at.get(ids[2])!),
      );
    });

    it('refuses a bad filter or time range (400), another connection’s or an unknown webhook or delivery (404), and a key without webhooks:manage (403)', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/refusals-${rand()}`);
      const d = await testCall(t, w);
      const base = `/v1/webhooks/${w.id}/deliveries`;
      for (const q of ['state=lost', 'event=nope', 'since=yesterday', 'since=2026-02-30T00:00:00Z', 'until=2026-11-27T08:00:00', 'limit=0']) {
        expectError(await call(t, 'get', `${base}?${q}`), 400, 'invalid_request', 'GET', LIST);
      }
      const backwards = await call(t, 'get', `${base}?since=2026-11-27T09:00:00Z&until=2026-11-27T08:00:00Z`);
      expectError(backwards, 400, 'invalid_request', 'GET', LIST);
      expect(backwards.body.error.message).toBe('until: must be later than since');

      const other = await makeTenant(api.app);
      // Another connection of the same organisation: its key does not reach this connection's webhooks either.
      const conn = await api.app.get(ConnectionsService).create(t.organisationId, 'Second connection', ['webhooks:manage']);
      const sameOrg = { auth: { Authorization: `Bearer ${(await api.app.get(ApiKeysService).create(conn.id)).key}` } } as Tenant;
      for (const who of [other, sameOrg]) {
        expectError(await call(who, 'get', base), 404, 'not_found', 'GET', LIST);
        expectError(await call(who, 'get', `${base}/${d.id}`), 404, 'not_found', 'GET', DELIVERY);
        expectError(await call(who, 'post', `${base}/${d.id}/resend`), 404, 'not_found', 'POST', RESEND);
        expectError(await call(who, 'post', `/v1/webhooks/${w.id}/recover`, { since: '2026-01-01T00:00:00Z' }), 404, 'not_found', 'POST', RECOVER);
      }
      const another = await makeHook(t, `https://127.0.0.1/another-${rand()}`);
      expectError(await call(t, 'get', `/v1/webhooks/${another.id}/deliveries/${d.id}`), 404, 'not_found', 'GET', DELIVERY);
      expectError(await call(t, 'get', `${base}/${'0'.repeat(32)}`), 404, 'not_found', 'GET', DELIVERY);
      expectError(await call(t, 'get', `${base}/not-an-id`), 404, 'not_found', 'GET', DELIVERY);
      expectError(await call(t, 'get', `/v1/webhooks/999999999/deliveries`), 404, 'not_found', 'GET', LIST);

      const noScope = await makeTenant(api.app, ['conversations:read']);
      expectError(await call(noScope, 'get', base), 403, 'scope_missing', 'GET', LIST);
      expectError(await call(noScope, 'get', `${base}/${d.id}`), 403, 'scope_missing', 'GET', DELIVERY);
      expectError(await call(noScope, 'post', `${base}/${d.id}/resend`), 403, 'scope_missing', 'POST', RESEND);
      expectError(await call(noScope, 'post', `/v1/webhooks/${w.id}/recover`, { since: '2026-01-01T00:00:00Z' }), 403, 'scope_missing', 'POST', RECOVER);

      // New paths only: the contract's paths answer the methods they did, and the new ones only theirs.
      expect((await call(t, 'patch', `/v1/webhooks/${w.id}`, {})).status).toBe(405);
      expect((await call(t, 'post', base, {})).status).toBe(405);
      expect((await call(t, 'get', `/v1/webhooks/${w.id}/recover`)).status).toBe(405);
    });
  });

  describe('POST /v1/webhooks/{id}/deliveries/{delivery_id}/resend', () => {
    it('resends a finished delivery as a new series under the same id; tries a waiting one now (its scheduled attempt replaced); refuses a queued or test one', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'resend');
      receiver.reply(w.path, { status: 500 });
      await endConversation(t);
      const [id] = await deliveries(w.id, 'waiting');
      const waiting = await getDelivery(t, w, id);
      // The contract's timetable: the next attempt is a minute away.
      expect(new Date(waiting.next_attempt_at).getTime()).toBeGreaterThan(Date.now() + 20_000);

      receiver.reply(w.path, { status: 200 });
      const tried = await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${id}/resend`);
      expect(tried.status).toBe(202);
      checker.check('POST', RESEND, 202, tried.body);
      expect(tried.body.data).toMatchObject({ action: 'tried_now', delivery: { id, state: 'waiting', series: 1, attempts_in_series: 1 } });
      await deliveries(w.id, 'delivered');
      const after = await getDelivery(t, w, id);
      expect(after.attempts.map((a: any) => [a.series, a.number, a.succeeded])).toEqual([
        [1, 1, false],
        [1, 2, true],
      ]);
      expect(receiver.received(w.path)).toHaveLength(2);
      // Nothing else is scheduled for it on either queue: the retry job was brought forward, not doubled.
      const queues = stand.worker.get(DeliveryQueues);
      expect(await queues.retries.getJob(id)).toBeUndefined();
      expect(await queues.firstAttempts.getJob(id)).toBeUndefined();

      const again = await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${id}/resend`);
      expect(again.status).toBe(202);
      expect(again.body.data).toMatchObject({ action: 'resent', delivery: { id, state: 'queued', series: 2, attempts_in_series: 0 } });
      await receiver.waitFor(w.path, 3);
      expect(JSON.parse(receiver.received(w.path)[2].raw).id).toBe(id);

      const test = await testCall(t, w);
      expectError(await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${test.id}/resend`), 422, 'validation_failed', 'POST', RESEND);
      // Queued, its first attempt an hour away (no worker takes it meanwhile).
      const [queued] = await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, next_attempt_at, created_at, updated_at)
         VALUES (md5(random()::text), $1, $2, $3, 'conversation.ended', now(), '{}', 'queued', now() + interval '1 hour', now(), now()) RETURNING id`,
        [w.id, t.organisationId, t.connectionId],
      );
      const refused = await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${queued.id}/resend`);
      expectError(refused, 422, 'validation_failed', 'POST', RESEND);
      expect(refused.body.error.message).toMatch(/^delivery: is queued/);
      expectError(await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${id}/resend`, { now: true }), 422, 'validation_failed', 'POST', RESEND);
      await db.query(`DELETE FROM webhook_deliveries WHERE id = $1`, [queued.id]);
    });

    it('Idempotency-Key: a replay answers the same, another request with the key 422, the key in use 409', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/resend-ik-${rand()}`);
      const d = await testCall(t, w);
      // A test delivery is refused: resend one made for the webhook as a finished, failed delivery.
      const failedRow = async (): Promise<{ id: string }> =>
        (
          await db.query(
            `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts, created_at, updated_at, finished_at)
             VALUES (md5(random()::text), $1, $2, $3, 'conversation.ended', now(), '{}', 'failed', 1, 8, now(), now(), now()) RETURNING id`,
            [w.id, t.organisationId, t.connectionId],
          )
        )[0];
      const row = await failedRow();
      const path = `/v1/webhooks/${w.id}/deliveries/${row.id}/resend`;
      const key = `ik-${rand()}`;
      const first = await call(t, 'post', path, undefined, key);
      expect(first.status).toBe(202);
      const replay = await call(t, 'post', path, undefined, key);
      expect(replay.status).toBe(202);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expect((await db.query(`SELECT series FROM webhook_deliveries WHERE id = $1`, [row.id]))[0].series).toBe(2);
      expectError(await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${d.id}/resend`, undefined, key), 422, 'idempotency_key_reused', 'POST', RESEND);

      // In progress: the first request is held inside the resend while the second arrives with its key.
      const { inside, release } = holdInside(api.app.get(DeliveryLogService), 'resendOrTryNow');
      const held = `ik-${rand()}`;
      const heldPath = `/v1/webhooks/${w.id}/deliveries/${(await failedRow()).id}/resend`;
      // Sent now (supertest sends when a promise is asked of it).
      const firstHeld = Promise.resolve(call(t, 'post', heldPath, undefined, held));
      await inside;
      expectError(await call(t, 'post', heldPath, undefined, held), 409, 'idempotency_key_in_use', 'POST', RESEND);
      release();
      expect((await firstHeld).status).toBe(202);
    });
  });

  describe('POST /v1/webhooks/{id}/recover', () => {
    it('sends now what failed, was given up or is waiting in the range, oldest first; tests and deliveries outside the range are left', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'recover');
      receiver.reply(w.path, { status: 500 });
      await endConversation(t);
      const [waiting] = await deliveries(w.id, 'waiting');
      await endConversation(t);
      const [, second] = await deliveries(w.id, 'waiting', 2);
      // Two that failed for good and one given up, made at known times (direct rows: eight real attempts take a day and a half).
      const row = (state: string, minutesAgo: number, reason: string | null = null) =>
        db
          .query(
            `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts, give_up_reason, created_at, updated_at, finished_at)
             VALUES (md5(random()::text), $1, $2, $3, 'conversation.ended', now(), '{"case_id":"1"}', $4, 1, 8, $5, now() - make_interval(mins => $6), now(), now()) RETURNING id`,
            [w.id, t.organisationId, t.connectionId, state, reason, minutesAgo],
          )
          .then((r: Array<{ id: string }>) => r[0].id);
      const old = await row('failed', 600);
      const failed = await row('failed', 30);
      const given = await row('given_up', 20, 'webhook_switched_off');
      const test = await testCall(t, w);
      receiver.reply(w.path, { status: 200 });

      const since = new Date(Date.now() - 60 * 60_000).toISOString();
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/recover`, { since }, `ik-${rand()}`);
      expect(res.status).toBe(202);
      checker.check('POST', RECOVER, 202, res.body);
      expect(res.body).toEqual({ data: { sent: 4, resent: 2, tried_now: 2, more: false } });
      await deliveries(w.id, 'delivered', 4);
      const states: Array<{ id: string; state: string; series: number; attempts: number }> = await db.query(
        `SELECT id, state, series, attempts FROM webhook_deliveries WHERE webhook_id = $1`,
        [w.id],
      );
      const byId = new Map(states.map((s) => [s.id, s]));
      expect(byId.get(old)).toMatchObject({ state: 'failed', series: 1 });
      expect(byId.get(test.id)).toMatchObject({ state: 'failed', series: 1 });
      expect(byId.get(failed)).toMatchObject({ state: 'delivered', series: 2, attempts: 1 });
      expect(byId.get(given)).toMatchObject({ state: 'delivered', series: 2, attempts: 1 });
      // The waiting ones were tried now in their series: attempt 2, not a new series.
      expect(byId.get(waiting)).toMatchObject({ state: 'delivered', series: 1, attempts: 2 });
      expect(byId.get(second)).toMatchObject({ state: 'delivered', series: 1, attempts: 2 });
      // Each sent once more, no more: 2 + 2 failed first attempts, then one each.
      const ids = receiver.received(w.path).map((r) => JSON.parse(r.raw).id as string);
      expect(ids.filter((id) => id === waiting)).toHaveLength(2);
      expect(ids.filter((id) => id === failed)).toHaveLength(1);

      // Nothing left to recover in the range now; `until` narrows it.
      expect((await call(t, 'post', `/v1/webhooks/${w.id}/recover`, { since })).body).toEqual({ data: { sent: 0, resent: 0, tried_now: 0, more: false } });
      const narrow = await call(t, 'post', `/v1/webhooks/${w.id}/recover`, {
        since: new Date(Date.now() - 700 * 60_000).toISOString(),
        until: new Date(Date.now() - 500 * 60_000).toISOString(),
      });
      expect(narrow.body.data).toEqual({ sent: 1, resent: 1, tried_now: 0, more: false });
    });

    it('sends at most 500 per request and says whether more remain', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/recover-many-${rand()}`);
      // Switched off: whatever is sent is given up again before any POST, so the receiver is not flooded.
      await db.query(`UPDATE webhooks SET switched_off_at = now() WHERE id = $1`, [w.id]);
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts, created_at, updated_at, finished_at)
         SELECT md5(random()::text || g), $1, $2, $3, 'conversation.ended', now(), '{}', 'failed', 1, 8, now() - make_interval(secs => g), now(), now()
           FROM generate_series(1, $4::int) g`,
        [w.id, t.organisationId, t.connectionId, MAX_BULK_RESEND + 1],
      );
      const since = new Date(Date.now() - 3600_000).toISOString();
      const first = await call(t, 'post', `/v1/webhooks/${w.id}/recover`, { since });
      expect(first.body.data).toEqual({ sent: MAX_BULK_RESEND, resent: MAX_BULK_RESEND, tried_now: 0, more: true });
      // The newest was left: the oldest go first.
      const [left] = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND series = 1 AND NOT is_test`, [w.id]);
      const [newest] = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND NOT is_test ORDER BY created_at DESC LIMIT 1`, [w.id]);
      expect(left.id).toBe(newest.id);
      expect(receiver.received(new URL(w.url).pathname)).toHaveLength(0);
    });

    it('refuses a bad time or range (422) and keeps the contract’s idempotency rules', async () => {
      const t = await makeTenant(api.app);
      const w = await makeHook(t, `https://127.0.0.1/recover-bad-${rand()}`);
      const path = `/v1/webhooks/${w.id}/recover`;
      for (const body of [
        {},
        { since: 'yesterday' },
        { since: '2026-11-27T08:00:00' },
        { since: '2026-02-30T08:00:00Z' },
        { since: 1 },
        { since: '2026-11-27T08:00:00Z', extra: 1 },
      ]) {
        expectError(await call(t, 'post', path, body), 422, 'validation_failed', 'POST', RECOVER);
      }
      const backwards = await call(t, 'post', path, { since: '2026-11-27T09:00:00Z', until: '2026-11-27T09:00:00Z' });
      expectError(backwards, 422, 'validation_failed', 'POST', RECOVER);
      expect(backwards.body.error.message).toBe('until: must be later than since');

      const key = `ik-${rand()}`;
      const first = await call(t, 'post', path, { since: '2026-11-27T08:00:00Z' }, key);
      expect(first.status).toBe(202);
      const replay = await call(t, 'post', path, { since: '2026-11-27T08:00:00Z' }, key);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(first.body);
      expectError(await call(t, 'post', path, { since: '2026-11-27T07:00:00Z' }, key), 422, 'idempotency_key_reused', 'POST', RECOVER);
    });
  });

  describe('two workers', () => {
    it('try-now and recover while a waiting delivery’s scheduled attempt is in flight do not double it', async () => {
      const t = await makeTenant(api.app);
      const w = await stand.hook(t, 'two-workers');
      receiver.reply(w.path, { status: 500 });
      await endConversation(t);
      const [id] = await deliveries(w.id, 'waiting');

      // Every worker's queueing of the delivery to be sent now, on either queue (how a worker hears a try-now).
      const queues = [stand.worker.get(DeliveryQueues), second.get(DeliveryQueues)];
      const forward = queues.map((q) => {
        const calls: string[] = [];
        const retry = q.retry.bind(q);
        jest.spyOn(q, 'retry').mockImplementation(async (did, delayMs) => {
          await retry(did, delayMs);
          if (did === id && delayMs === 0) calls.push('retry');
        });
        const first = q.first.bind(q);
        jest.spyOn(q, 'first').mockImplementation(async (ids, traces) => {
          await first(ids, traces);
          if (ids.includes(id)) calls.push('first');
        });
        return calls;
      });

      // Its scheduled attempt comes due (as if the minute had passed) and goes out; the receiver holds it.
      let release!: () => void;
      const hold = new Promise<void>((r) => (release = r));
      receiver.reply(w.path, { status: 200, hold });
      await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [id]);
      await queues[0].retry(id, 0);
      await receiver.waitFor(w.path, 2);
      forward[0].length = 0;

      // While it is in flight: try now replaces nothing (that attempt is the one), and recovery does not pick it.
      const tried = await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${id}/resend`);
      expect({ status: tried.status, action: tried.body.data?.action }).toEqual({ status: 202, action: 'tried_now' });
      const recovered = await call(t, 'post', `/v1/webhooks/${w.id}/recover`, { since: new Date(Date.now() - 3600_000).toISOString() });
      expect(recovered.body.data).toEqual({ sent: 0, resent: 0, tried_now: 0, more: false });
      // Both workers have heard the try-now and handled it before the hold ends.
      await until(async () => forward.every((calls) => calls.length >= 1), 'both workers to handle the try-now');
      release();
      await deliveries(w.id, 'delivered');
      expect(await queues[0].retries.getJob(id)).toBeUndefined();
      expect(await queues[0].firstAttempts.getJob(id)).toBeUndefined();
      expect(receiver.received(w.path)).toHaveLength(2);
      const attempts = await db.query(`SELECT series, number, succeeded FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id`, [id]);
      expect(attempts).toEqual([
        { series: 1, number: 1, succeeded: false },
        { series: 1, number: 2, succeeded: true },
      ]);
    });
  });
});
