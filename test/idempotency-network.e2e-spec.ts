import { DataSource } from 'typeorm';
import { HostResolver } from '@features/webhooks';
import { makeTenant, Tenant, TestApi } from './support/api';
import { OpenApiChecker } from './support/openapi-check';
import { Res, webhookKit } from './support/webhook-kit';
import { startReceiverApi } from './support/webhook-stand';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * An Idempotency-Key call that does network I/O (the test call's POST, the
 * creation's DNS) holds no pooled connection while it waits, so slow receivers cannot take the
 * whole pool from the replica's other calls.
 */
describe('Idempotency-Key calls hold no database connection through network I/O', () => {
  const RECEIVER_DELAY_MS = 9000;
  let api: TestApi;
  let db: DataSource;
  let checker: OpenApiChecker;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    ({ api, receiver } = await startReceiverApi());
    db = api.app.get(DataSource);
    checker = new OpenApiChecker((await api.http().get('/v1/openapi.json')).body);
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await receiver?.close();
  });

  const { call, create, rand } = webhookKit(
    () => api,
    () => checker,
  );

  it('20 concurrent test calls with keys to a receiver answering after 9 s; reads answer fast meanwhile, on the default pool of 10', async () => {
    expect(api.config.databasePoolSize).toBe(10);
    // A connection holds at most 10 webhooks, and a webhook is tested once per 5 s: two connections, ten each.
    const owners = [await makeTenant(api.app), await makeTenant(api.app)];
    const reader = await makeTenant(api.app);
    const hooks: Array<{ t: Tenant; id: string; path: string }> = [];
    for (const t of owners) {
      for (let i = 0; i < 10; i++) {
        const label = `slow-${rand()}`;
        const w = await create(t, { url: `https://127.0.0.1/${label}` });
        hooks.push({ t, id: w.id, path: `/${label}` });
        receiver.reply(`/${label}`, { delayMs: RECEIVER_DELAY_MS });
      }
    }
    const started = Date.now();
    const keys = hooks.map(() => `test-${rand()}`);
    // `.then` sends a supertest request; until then it is only built.
    const calls: Array<Promise<Res>> = hooks.map((h, i) => call(h.t, 'post', `/v1/webhooks/${h.id}/test`, undefined, keys[i]).then((r) => r));

    // All 20 reach the receiver: none waits for another's connection.
    await Promise.all(hooks.map((h) => receiver.waitFor(h.path, 1, RECEIVER_DELAY_MS - 2000)));

    // While they wait for their answers, plain reads (one of them authenticating a key not yet cached) answer fast.
    const reads = [
      () => call(reader, 'get', '/v1/me'),
      () => call(reader, 'get', '/v1/webhooks'),
      () => call(owners[0], 'get', '/v1/webhooks'),
      () => call(owners[1], 'get', '/v1/me'),
    ];
    for (const read of reads) {
      const t0 = Date.now();
      const res = await read();
      expect({ status: res.status, fast: Date.now() - t0 < 1000 }).toEqual({ status: 200, fast: true });
    }
    // A repeat of a call still in flight answers 409 at once, without waiting for the first.
    const t0 = Date.now();
    const busy = await call(hooks[0].t, 'post', `/v1/webhooks/${hooks[0].id}/test`, undefined, keys[0]);
    expect({ status: busy.status, code: busy.body?.error?.code, fast: Date.now() - t0 < 1000 }).toEqual({
      status: 409,
      code: 'idempotency_key_in_use',
      fast: true,
    });
    expect(Date.now() - started).toBeLessThan(RECEIVER_DELAY_MS);

    const answers = await Promise.all(calls);
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ delivered: true, status: 200, error: null });
    }
    // Each was sent once, and its answer was stored with the key: a repeat replays it without sending again.
    for (const h of hooks) expect(receiver.received(h.path)).toHaveLength(1);
    const again = await call(hooks[3].t, 'post', `/v1/webhooks/${hooks[3].id}/test`, undefined, keys[3]);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(answers[3].body);
    expect(receiver.received(hooks[3].path)).toHaveLength(1);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ANY ($1::bigint[])`, [hooks.map((h) => h.id)]);
    expect(n).toBe(20);
  }, 60_000);

  it('12 concurrent creations with keys whose host takes 3 s to resolve; reads answer fast meanwhile', async () => {
    const owners = [await makeTenant(api.app), await makeTenant(api.app)];
    const reader = await makeTenant(api.app);
    const resolver = api.app.get(HostResolver);
    const slowHost = `slow-${rand()}.example.com`;
    jest.spyOn(resolver, 'resolve').mockImplementation(async () => {
      await new Promise((r) => setTimeout(r, 3000));
      return [{ address: '127.0.0.1', family: 4 }];
    });
    try {
      const creations = Array.from({ length: 12 }, (_, i) =>
        call(owners[i % 2], 'post', '/v1/webhooks', { url: `https://${slowHost}/h${i}`, events: ['conversation.ended'] }, `create-${rand()}`).then((r) => r),
      );
      await new Promise((r) => setTimeout(r, 500));
      for (const read of [() => call(reader, 'get', '/v1/me'), () => call(reader, 'get', '/v1/webhooks')]) {
        const t0 = Date.now();
        const res = await read();
        expect({ status: res.status, fast: Date.now() - t0 < 1000 }).toEqual({ status: 200, fast: true });
      }
      for (const res of await Promise.all(creations)) expect(res.status).toBe(201);
    } finally {
      jest.restoreAllMocks();
    }
  }, 30_000);

  it('a key used while its first test call is in flight with another request answers 409, and a failed call leaves the key free', async () => {
    const t = await makeTenant(api.app);
    const label = `slow-${rand()}`;
    const w = await create(t, { url: `https://127.0.0.1/${label}` });
    receiver.reply(`/${label}`, { delayMs: 1500 });
    const key = `k-${rand()}`;
    const first = call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key).then((r) => r);
    await receiver.waitFor(`/${label}`);
    // The contract answers "in progress" before comparing requests.
    const other = await call(t, 'post', '/v1/webhooks', { url: `https://127.0.0.1/${label}-b`, events: ['conversation.ended'] }, key);
    expect({ status: other.status, code: other.body?.error?.code }).toEqual({ status: 409, code: 'idempotency_key_in_use' });
    expect((await first).status).toBe(200);

    // An error is not stored: 429 now (tested less than 5 s ago) leaves the key free for a later try.
    const key2 = `k-${rand()}`;
    const limited = await call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key2);
    expect(limited.status).toBe(429);
    const [row] = await db.query(`SELECT 1 FROM idempotency_keys WHERE connection_id = $1 AND idempotency_key = $2`, [t.connectionId, key2]);
    expect(row).toBeUndefined();
  }, 30_000);
});
