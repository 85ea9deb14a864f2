import { Clock } from '@kernel/core';
import { CasesService } from '@features/cases';
import { ApiKeysService, ConnectionsService } from '@features/connections';
import { ConversationIngestService } from '@features/conversations';
import { computeSignature, WebhookSecretRotationService } from '@features/webhooks';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { makeTenant, Tenant, TestApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';
import { until } from './support/until';
import { Res } from './support/webhook-kit';
import { ReceivedRequest, WebhookReceiver } from './support/webhook-receiver';
import { MadeHook, startWebhookStand, WebhookStand } from './support/webhook-stand';
import { holdInside } from './support/hold';

const SLOW = 90_000;
jest.setTimeout(SLOW);

const stripe = new Stripe('sk_test_unused');
const rand = () => Math.random().toString(36).slice(2, 10);
const ROTATE = '/v1/webhooks/{id}/rotate-secret';
const HEX = '[0-9a-f]{64}';

/** The receiver snippet partners are given in docs/partners/webhooks.md, run as they would run it. */
function docsVerifier(): (raw: Buffer | string, header: string, secret: string, tol?: number, now?: number) => boolean {
  const doc = readFileSync(join(__dirname, '..', 'docs', 'partners', 'webhooks.md'), 'utf8');
  const code = /```js\n(\/\/ verify-delivery\.js[\s\S]*?)```/.exec(doc)![1];
  const module = { exports: {} as { verifyServiceSignature: ReturnType<typeof docsVerifier> } };
  runInNewContext(code, { require, module, Buffer });
  return module.exports.verifyServiceSignature;
}

/**
 * Rotating a webhook's signing secret, against the real api, the real worker and a real HTTPS
 * receiver: the new secret once (the contract's create semantics), the refusals, and what the
 * receiver gets — both signatures during the overlap, checked with stripe-node against each
 * secret, only the new one after it (time moved with the worker's Clock, never slept).
 */
describe('Webhooks: rotating the signing secret', () => {
  let stand: WebhookStand;
  let api: TestApi;
  let receiver: WebhookReceiver;
  let db: DataSource;
  let checker: OpenApiChecker;

  beforeAll(async () => {
    stand = await startWebhookStand({});
    ({ api, receiver, db } = stand);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, SLOW);
  afterAll(() => stand?.close(), SLOW);
  afterEach(() => jest.restoreAllMocks());

  const call = (t: Pick<Tenant, 'auth'>, method: 'get' | 'post' | 'put' | 'delete', path: string, body?: unknown, key?: string): Promise<Res> => {
    let req = api.http()[method](path).set(t.auth);
    if (key) req = req.set('Idempotency-Key', key);
    return (body === undefined ? req : req.send(body as object)) as unknown as Promise<Res>;
  };
  const rotate = (t: Pick<Tenant, 'auth'>, w: { id: string }, body: unknown, key?: string) => call(t, 'post', `/v1/webhooks/${w.id}/rotate-secret`, body, key);
  const expectError = (res: Res, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    checker.check('POST', ROTATE, status, res.body);
  };
  const secrets = async (w: { id: string }) =>
    (await db.query(`SELECT secret, previous_secret, previous_secret_expires_at FROM webhooks WHERE id = $1`, [w.id]))[0] as {
      secret: string;
      previous_secret: string | null;
      previous_secret_expires_at: Date | null;
    };
  const endConversation = async (t: Tenant) => {
    const ingest = api.app.get(ConversationIngestService);
    const c = (await api.app.get(CasesService).open(t.organisationId, { externalRef: `REF-${rand()}` })).case;
    const conv = await ingest.start(c.id, 'en', 'fr');
    await ingest.appendTurn(conv.id, { speaker: 'a', language: 'en', text: 'hello', translation: 'bonjour' });
    return ingest.end(conv.id);
  };
  /** Verifies as a Stripe-style receiver does, at `at` (the clock of the attempt), with the contract's five minutes. */
  const construct = (got: ReceivedRequest, secret: string, at: Date) =>
    stripe.webhooks.constructEvent(got.raw, got.headers['service-signature'] as string, secret, 300, undefined, at.getTime());
  const signatures = (got: ReceivedRequest) => {
    const header = got.headers['service-signature'] as string;
    const t = Number(/^t=(\d+),/.exec(header)![1]);
    return { header, t, v1: [...header.matchAll(/v1=([0-9a-f]+)/g)].map((m) => m[1]) };
  };

  it('answers the new secret once: a replay answers secret null, the same key with another body 422, the key in use 409; nothing keeps the secret but the webhook', async () => {
    const t = await makeTenant(api.app);
    const w = await stand.hook(t, 'rotate-ik');
    const key = `ik-${rand()}`;
    const before = Date.now();
    const first = await rotate(t, w, { current_secret: w.secret }, key);
    expect(first.status).toBe(200);
    checker.check('POST', ROTATE, 200, first.body);
    const { data } = first.body;
    expect(data.webhook_id).toBe(w.id);
    expect(data.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(data.secret).not.toBe(w.secret);
    expect(data.secret_shown).toBeUndefined();
    // The default overlap: 24 hours from the rotation.
    const expires = new Date(data.previous_secret_expires_at).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);
    expect(await secrets(w)).toEqual({ secret: data.secret, previous_secret: w.secret, previous_secret_expires_at: new Date(data.previous_secret_expires_at) });

    const replay = await rotate(t, w, { current_secret: w.secret }, key);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    checker.check('POST', ROTATE, 200, replay.body);
    expect(replay.body).toEqual({ data: { ...data, secret: null, secret_shown: false } });
    // The replay rotated nothing more.
    expect((await secrets(w)).secret).toBe(data.secret);
    // The stored answer never holds the new secret.
    const [stored] = await db.query(`SELECT response_body::text AS body FROM idempotency_keys WHERE connection_id = $1 AND idempotency_key = $2`, [
      t.connectionId,
      key,
    ]);
    expect(stored.body).not.toContain(data.secret);

    expectError(await rotate(t, w, { current_secret: w.secret, expires_in_seconds: 60 }, key), 422, 'idempotency_key_reused');

    // In progress: the first request is held inside the rotation while the second arrives with its key.
    const { inside, release } = holdInside(api.app.get(WebhookSecretRotationService), 'rotate');
    const held = `ik-${rand()}`;
    const firstHeld = Promise.resolve(rotate(t, w, { current_secret: data.secret, expires_in_seconds: 0 }, held));
    await inside;
    expectError(await rotate(t, w, { current_secret: data.secret, expires_in_seconds: 0 }, held), 409, 'idempotency_key_in_use');
    release();
    const done = await firstHeld;
    expect(done.status).toBe(200);
    // A rotation during an overlap with 0: the older previous secret is dropped and the replaced one stops at once.
    expect(done.body.data.previous_secret_expires_at).toBeNull();
    expect(await secrets(w)).toEqual({ secret: done.body.data.secret, previous_secret: null, previous_secret_expires_at: null });
  });

  it('refuses a wrong secret or overlap (422 naming the field, nothing changed), a key without webhooks:manage (403), another connection’s, an unknown or a removed webhook (404; removal wipes both secrets)', async () => {
    const t = await makeTenant(api.app);
    const w = await stand.hook(t, 'rotate-refusals');
    const unchanged = await secrets(w);
    const refusals: Array<[unknown, string]> = [
      [{ current_secret: `${w.secret}x` }, 'current_secret: '],
      [{ current_secret: w.secret.slice(0, -1) }, 'current_secret: '],
      [{ current_secret: 'whsec_' }, 'current_secret: '],
      [{ current_secret: '' }, 'current_secret: '],
      [{}, 'current_secret: '],
      [{ current_secret: 7 }, 'current_secret: '],
      [{ current_secret: w.secret, expires_in_seconds: -1 }, 'expires_in_seconds: '],
      [{ current_secret: w.secret, expires_in_seconds: 604_801 }, 'expires_in_seconds: '],
      [{ current_secret: w.secret, expires_in_seconds: 1.5 }, 'expires_in_seconds: '],
      [{ current_secret: w.secret, expires_in_seconds: '86400' }, 'expires_in_seconds: '],
      [{ current_secret: w.secret, expires_in_seconds: null }, 'expires_in_seconds: '],
      [{ current_secret: w.secret, overlap: 60 }, 'overlap: '],
    ];
    for (const [body, field] of refusals) {
      const res = await rotate(t, w, body, `ik-${rand()}`);
      expectError(res, 422, 'validation_failed');
      expect(res.body.error.message.startsWith(field)).toBe(true);
    }
    expect((await rotate(t, w, { current_secret: `${w.secret}x` })).body.error.message).toBe(
      "current_secret: is not the webhook's signing secret (a lost secret cannot be rotated: remove the webhook and add it again)",
    );
    expect(await secrets(w)).toEqual(unchanged);

    const noScope = await makeTenant(api.app, ['conversations:read']);
    expectError(await rotate(noScope, w, { current_secret: w.secret }), 403, 'scope_missing');
    const other = await makeTenant(api.app);
    const conn = await api.app.get(ConnectionsService).create(t.organisationId, 'Second connection', ['webhooks:manage']);
    const sameOrg = { auth: { Authorization: `Bearer ${(await api.app.get(ApiKeysService).create(conn.id)).key}` } };
    for (const who of [other, sameOrg]) expectError(await rotate(who, w, { current_secret: w.secret }), 404, 'not_found');
    expectError(await rotate(t, { id: '999999999' }, { current_secret: w.secret }), 404, 'not_found');
    // Removing a webhook in an overlap wipes both its secrets.
    const removed = await stand.hook(t, 'rotate-removed');
    expect((await rotate(t, removed, { current_secret: removed.secret })).status).toBe(200);
    expect((await call(t, 'delete', `/v1/webhooks/${removed.id}`)).status).toBe(204);
    expect(await secrets(removed)).toEqual({ secret: '', previous_secret: null, previous_secret_expires_at: null });
    expectError(await rotate(t, removed, { current_secret: removed.secret }), 404, 'not_found');
    expect(await secrets(w)).toEqual(unchanged);
    // The contract's paths keep their methods.
    expect((await call(t, 'put', `/v1/webhooks/${w.id}`, { url: w.url })).status).toBe(405);
  });

  it('signs every attempt with both secrets during the overlap (stripe-node accepts either), a retry scheduled before the rotation included, and with the new one only after it', async () => {
    const t = await makeTenant(api.app);
    const w: MadeHook = await stand.hook(t, 'rotate-overlap');
    // The first attempt fails: the delivery waits for its retry, scheduled before the rotation.
    receiver.reply(w.path, { status: 500 });
    await endConversation(t);
    const [failed] = await receiver.waitFor(w.path, 1);
    expect(signatures(failed).v1).toHaveLength(1);
    const [waiting] = await until(
      async () => {
        const rows = await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'waiting'`, [w.id]);
        return rows.length ? rows : undefined;
      },
      'the delivery waiting for its retry',
      30_000,
    );
    receiver.reply(w.path, { status: 200 });

    const res = await rotate(t, w, { current_secret: w.secret, expires_in_seconds: 3600 });
    expect(res.status).toBe(200);
    const fresh = res.body.data.secret as string;
    const expiresAt = new Date(res.body.data.previous_secret_expires_at);
    const verify = docsVerifier();

    // The waiting delivery, tried now (after the rotation, in the overlap): both signatures.
    expect((await call(t, 'post', `/v1/webhooks/${w.id}/deliveries/${waiting.id}/resend`)).status).toBe(202);
    // A new delivery in the overlap, and the api's own test call.
    await endConversation(t);
    expect((await call(t, 'post', `/v1/webhooks/${w.id}/test`)).status).toBe(200);
    const during = (await receiver.waitFor(w.path, 4)).slice(1);
    for (const got of during) {
      const { header, t: ts, v1 } = signatures(got);
      expect(header).toMatch(new RegExp(`^t=\\d+,v1=${HEX},v1=${HEX}$`));
      // The new secret's signature first, then the old one's.
      expect(v1).toEqual([computeSignature(fresh, ts, got.raw), computeSignature(w.secret, ts, got.raw)]);
      const at = new Date(ts * 1000);
      for (const secret of [fresh, w.secret]) expect(construct(got, secret, at).id).toBe(JSON.parse(got.raw).id);
      expect(() => construct(got, 'whsec_someone_else', at)).toThrow(/No signatures found matching the expected signature/);
      // The documentation's own receiver snippet accepts it with either secret too.
      for (const secret of [fresh, w.secret]) expect(verify(got.raw, header, secret, 300, ts)).toBe(true);
    }
    expect(during.map((g) => JSON.parse(g.raw).event).sort()).toEqual(['conversation.ended', 'conversation.ended', 'webhook.test']);

    // After the overlap (the worker's clock at the expiry): only the new secret signs.
    jest.spyOn(stand.worker.get(Clock), 'now').mockReturnValue(expiresAt);
    await endConversation(t);
    const [after] = (await receiver.waitFor(w.path, 5)).slice(4);
    const { header, t: ts } = signatures(after);
    expect(header).toMatch(new RegExp(`^t=${Math.floor(expiresAt.getTime() / 1000)},v1=${HEX}$`));
    expect(construct(after, fresh, expiresAt).id).toBe(JSON.parse(after.raw).id);
    expect(() => construct(after, w.secret, expiresAt)).toThrow(/No signatures found matching the expected signature/);
    expect(verify(after.raw, header, fresh, 300, ts)).toBe(true);
    expect(verify(after.raw, header, w.secret, 300, ts)).toBe(false);
    expect(ts).toBe(Math.floor(expiresAt.getTime() / 1000));
  });
});
