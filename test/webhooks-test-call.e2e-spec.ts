import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import Stripe from 'stripe';
import { DataSource } from 'typeorm';
import { HostResolver, verifySignature, WebhookTls } from '@features/webhooks';
import { makeTenant, startApi, TestApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';
import { Res, webhookKit } from './support/webhook-kit';
import { startReceiverApi } from './support/webhook-stand';
import { RECEIVER_DOMAIN, WebhookReceiver } from './support/webhook-receiver';

const stripe = new Stripe('sk_test_unused');

describe('Webhooks: the test call', () => {
  let api: TestApi;
  let db: DataSource;
  let checker: OpenApiChecker;
  let receiver: WebhookReceiver;
  const rand = () => Math.random().toString(36).slice(2, 10);

  beforeAll(async () => {
    ({ api, receiver } = await startReceiverApi());
    db = api.app.get(DataSource);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });
  afterEach(() => jest.restoreAllMocks());

  const { call, expectError, hookUrl, create, resolveAs } = webhookKit(
    () => api,
    () => checker,
  );

  describe('POST /v1/webhooks/{id}/test', () => {
    it('sends a signed webhook.test now and answers what happened; the signature verifies two ways; it is logged', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
      expect(res.status).toBe(200);
      checker.check('POST', '/v1/webhooks/{id}/test', 200, res.body);
      expect(res.body).toEqual({
        data: { delivery_id: expect.stringMatching(/^[0-9a-f]{32}$/), delivered: true, status: 200, error: null, duration_ms: expect.any(Number) },
      });
      const [got] = receiver.received(new URL(w.url).pathname);
      expect(got.method).toBe('POST');
      expect(got.headers['content-type']).toBe('application/json');
      expect(JSON.parse(got.raw)).toEqual({
        id: res.body.data.delivery_id,
        event: 'webhook.test',
        occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: { webhook_id: w.id, connection_id: t.connectionId },
      });
      const header = got.headers['service-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(Math.abs(Number(/^t=(\d+)/.exec(header)![1]) - Date.now() / 1000)).toBeLessThan(60);
      expect(verifySignature(header, got.raw, w.secret)).toBe(true);
      expect(stripe.webhooks.signature!.verifyHeader(got.raw, header, w.secret, 300)).toBe(true);
      expect(verifySignature(header, got.raw, `${w.secret}x`)).toBe(false);
      expect(() => stripe.webhooks.signature!.verifyHeader(`${got.raw} `, header, w.secret, 300)).toThrow();

      const [row] = await db.query(`SELECT * FROM webhook_deliveries WHERE id = $1`, [res.body.data.delivery_id]);
      expect(row).toMatchObject({ is_test: true, state: 'delivered', event: 'webhook.test', attempts: 1, webhook_id: w.id });
      const attempts = await db.query(`SELECT number, succeeded, status, duration_ms, error FROM webhook_delivery_attempts WHERE delivery_id = $1`, [row.id]);
      expect(attempts).toEqual([{ number: 1, succeeded: true, status: 200, duration_ms: res.body.data.duration_ms, error: null }]);
    });

    it('a second test within 5 seconds answers 429 rate_limited with Retry-After; another webhook is not held up', async () => {
      const t = await makeTenant(api.app);
      const [a, b] = [await create(t), await create(t)];
      expect((await call(t, 'post', `/v1/webhooks/${a.id}/test`)).status).toBe(200);
      const again = await call(t, 'post', `/v1/webhooks/${a.id}/test`);
      expectError(again, 429, 'rate_limited', 'POST', '/v1/webhooks/{id}/test');
      expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(again.headers['retry-after'])).toBeLessThanOrEqual(5);
      expect(receiver.received(new URL(a.url).pathname)).toHaveLength(1);
      expect((await call(t, 'post', `/v1/webhooks/${b.id}/test`)).status).toBe(200);
    });

    it('counts the 5 seconds in Redis, shared by every api replica', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const replica = await startApi({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32' });
      try {
        replica.app.get(WebhookTls).ca = receiver.cert;
        expect((await call(t, 'post', `/v1/webhooks/${w.id}/test`)).status).toBe(200);
        const other = (await replica.http().post(`/v1/webhooks/${w.id}/test`).set(t.auth)) as unknown as Res;
        expect({ status: other.status, code: other.body.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
      } finally {
        await replica.close();
      }
    });

    it('an IK replay answers the first answer again without sending or counting another test', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const key = `t-${rand()}`;
      const first = await call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key);
      const again = await call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key);
      expect(again.status).toBe(200);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(first.body);
      expect(receiver.received(new URL(w.url).pathname)).toHaveLength(1);
    });

    it('a failure is answered, tried once, never retried, and never counts towards switching off', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t, { url: hookUrl('fails') });
      receiver.reply(new URL(w.url).pathname, { status: 503 });
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
      expect(res.status).toBe(200);
      checker.check('POST', '/v1/webhooks/{id}/test', 200, res.body);
      expect(res.body.data).toMatchObject({ delivered: false, status: 503, error: 'answered 503' });
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received(new URL(w.url).pathname)).toHaveLength(1);
      const [row] = await db.query(`SELECT state, attempts, next_attempt_at FROM webhook_deliveries WHERE id = $1`, [res.body.data.delivery_id]);
      expect(row).toEqual({ state: 'failed', attempts: 1, next_attempt_at: null });
      const [hook] = await db.query(`SELECT failing_since, switched_off_at FROM webhooks WHERE id = $1`, [w.id]);
      expect(hook).toEqual({ failing_since: null, switched_off_at: null });
    });

    it('a redirect is a failure and is not followed', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const path = new URL(w.url).pathname;
      receiver.reply(path, { status: 302, headers: { location: `${path}-followed` } });
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
      expect(res.body.data).toMatchObject({ delivered: false, status: 302 });
      expect(res.body.data.error).toContain('redirect');
      expect(receiver.received(path)).toHaveLength(1);
    });

    it('nothing is sent when the name now resolves to a private address', async () => {
      const t = await makeTenant(api.app);
      const host = `moved-${rand()}.${RECEIVER_DOMAIN}`;
      resolveAs({ [host]: ['127.0.0.1'] });
      const w = await create(t, { url: `https://${host}/moved` });
      jest.restoreAllMocks();
      resolveAs({ [host]: ['127.0.0.1', '10.0.0.8'] });
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
      expect(res.body.data).toMatchObject({ delivered: false, status: null });
      expect(res.body.data.error).toBe(`${host} resolves to an address that is not public; nothing was sent`);
      expect(res.body.data.error).not.toMatch(/10\.0\.0\.8|127\.0\.0\.1|private/);
      expect(receiver.received('/moved')).toHaveLength(0);
    });

    it('a connection error names the host, never the address it resolved to (even one the operator allows)', async () => {
      const replica = await startApi({ WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' });
      try {
        const t = await makeTenant(replica.app);
        const host = `closed-${rand()}.${RECEIVER_DOMAIN}`;
        // Nothing listens on 127.0.0.9:443, so the connection is refused.
        jest.spyOn(replica.app.get(HostResolver), 'resolve').mockResolvedValue([{ address: '127.0.0.9', family: 4 }]);
        const made = (await replica
          .http()
          .post('/v1/webhooks')
          .set(t.auth)
          .send({ url: `https://${host}/closed`, events: ['conversation.ended'] })) as unknown as Res;
        expect(made.status).toBe(201);
        const res = (await replica.http().post(`/v1/webhooks/${made.body.data.id}/test`).set(t.auth)) as unknown as Res;
        expect(res.body.data).toMatchObject({ delivered: false, status: null });
        expect(res.body.data.error).toContain(host);
        expect(res.body.data.error).not.toContain('127.0.0.9');
      } finally {
        await replica.close();
      }
    });

    it('a switched-off webhook can still be tested', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      await db.query(`UPDATE webhooks SET switched_off_at = now() - interval '1 hour', failing_since = now() - interval '4 days' WHERE id = $1`, [w.id]);
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`);
      expect(res.body.data).toMatchObject({ delivered: true, status: 200 });
      const one = await call(t, 'get', `/v1/webhooks/${w.id}`);
      expect(one.body.data.switched_off_at).toMatch(/Z$/);
    });

    it('the receiver snippet in docs/partners/webhooks.md verifies a real delivery, and refuses a changed body or an old one', async () => {
      const doc = readFileSync(join(__dirname, '..', 'docs', 'partners', 'webhooks.md'), 'utf8');
      const code = /```js\n(\/\/ verify-delivery\.js[\s\S]*?)```/.exec(doc)?.[1];
      expect(code).toBeDefined();
      const module = {
        exports: {} as { verifyServiceSignature: (raw: Buffer | string, header: string, secret: string, tol?: number, now?: number) => boolean },
      };
      runInNewContext(code!, { require, module, Buffer });
      const { verifyServiceSignature } = module.exports;
      const t = await makeTenant(api.app);
      const w = await create(t);
      expect((await call(t, 'post', `/v1/webhooks/${w.id}/test`)).body.data.delivered).toBe(true);
      const [got] = receiver.received(new URL(w.url).pathname);
      const header = got.headers['service-signature'] as string;
      const sent = Number(/^t=(\d+)/.exec(header)![1]);
      expect(verifyServiceSignature(Buffer.from(got.raw), header, w.secret)).toBe(true);
      expect(verifyServiceSignature(got.raw.replace('webhook.test', 'webhook.tess'), header, w.secret)).toBe(false);
      expect(verifyServiceSignature(got.raw, header, w.secret, 300, sent + 301)).toBe(false);
      expect(verifyServiceSignature(got.raw, header, 'whsec_wrong')).toBe(false);
    });

    it('takes no body', async () => {
      const t = await makeTenant(api.app);
      const w = await create(t);
      const res = await call(t, 'post', `/v1/webhooks/${w.id}/test`, { anything: 1 });
      expectError(res, 422, 'validation_failed', 'POST', '/v1/webhooks/{id}/test');
    });
  });
});
