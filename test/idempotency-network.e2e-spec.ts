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

  /** A promise the test settles by hand, and a count of the calls that settled before it did. */
  function gate() {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { opened, open };
  }
  function tracked<T>(p: Promise<T>, settled: { n: number }): Promise<T> {
    return p.finally(() => settled.n++);
  }

  // No clock decides these tests: the receiver (or the resolver) holds every call until the reads are done. Were a
  // held call keeping a pooled connection, the reads would wait for the pool until the held calls gave up, so the
  // proof is the order: every read answered while all held calls were still unsettled.
  it('20 concurrent test calls with keys held by the receiver; reads answer meanwhile, on the default pool of 10', async () => {
    expect(api.config.databasePoolSize).toBe(10);
    // A connection holds at most 10 webhooks, and a webhook is tested once per 5 s: two connections, ten each.
    const owners = [await makeTenant(api.app), await makeTenant(api.app)];
    const reader = await makeTenant(api.app);
    const held = gate();
    const hooks: Array<{ t: Tenant; id: string; path: string }> = [];
    for (const t of owners) {
      for (let i = 0; i < 10; i++) {
        const label = `slow-${rand()}`;
        const w = await create(t, { url: `https://127.0.0.1/${label}` });
        hooks.push({ t, id: w.id, path: `/${label}` });
        receiver.reply(`/${label}`, { hold: held.opened });
      }
    }
    const keys = hooks.map(() => `test-${rand()}`);
    const settled = { n: 0 };
    // `.then` sends a supertest request; until then it is only built.
    const calls: Array<Promise<Res>> = hooks.map((h, i) =>
      tracked(
        call(h.t, 'post', `/v1/webhooks/${h.id}/test`, undefined, keys[i]).then((r) => r),
        settled,
      ),
    );
    try {
      // All 20 reach the receiver: none waits for another's connection.
      await Promise.all(hooks.map((h) => receiver.waitFor(h.path, 1)));

      // While they wait for their answers, plain reads (one of them authenticating a key not yet cached) answer.
      const reads = [
        () => call(reader, 'get', '/v1/me'),
        () => call(reader, 'get', '/v1/webhooks'),
        () => call(owners[0], 'get', '/v1/webhooks'),
        () => call(owners[1], 'get', '/v1/me'),
      ];
      for (const read of reads) {
        const res = await read();
        expect({ status: res.status, heldCallsSettled: settled.n }).toEqual({ status: 200, heldCallsSettled: 0 });
      }
      // A repeat of a call still in flight answers 409 without waiting for the first.
      const busy = await call(hooks[0].t, 'post', `/v1/webhooks/${hooks[0].id}/test`, undefined, keys[0]);
      expect({ status: busy.status, code: busy.body?.error?.code, heldCallsSettled: settled.n }).toEqual({
        status: 409,
        code: 'idempotency_key_in_use',
        heldCallsSettled: 0,
      });
    } finally {
      held.open();
    }

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

  it('12 concurrent creations with keys whose host does not resolve until the reads are done; reads answer meanwhile', async () => {
    const owners = [await makeTenant(api.app), await makeTenant(api.app)];
    const reader = await makeTenant(api.app);
    const resolver = api.app.get(HostResolver);
    const slowHost = `slow-${rand()}.example.com`;
    const held = gate();
    let resolving = 0;
    const allResolving = gate();
    jest.spyOn(resolver, 'resolve').mockImplementation(async () => {
      if (++resolving === 12) allResolving.open();
      await held.opened;
      return [{ address: '127.0.0.1', family: 4 }];
    });
    const settled = { n: 0 };
    try {
      const creations = Array.from({ length: 12 }, (_, i) =>
        tracked(
          call(owners[i % 2], 'post', '/v1/webhooks', { url: `https://${slowHost}/h${i}`, events: ['conversation.ended'] }, `create-${rand()}`).then((r) => r),
          settled,
        ),
      );
      try {
        await allResolving.opened;
        for (const read of [() => call(reader, 'get', '/v1/me'), () => call(reader, 'get', '/v1/webhooks')]) {
          const res = await read();
          expect({ status: res.status, heldCallsSettled: settled.n }).toEqual({ status: 200, heldCallsSettled: 0 });
        }
      } finally {
        held.open();
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
    const held = gate();
    receiver.reply(`/${label}`, { hold: held.opened });
    const key = `k-${rand()}`;
    const first = call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key).then((r) => r);
    try {
      await receiver.waitFor(`/${label}`);
      // The contract answers "in progress" before comparing requests.
      const other = await call(t, 'post', '/v1/webhooks', { url: `https://127.0.0.1/${label}-b`, events: ['conversation.ended'] }, key);
      expect({ status: other.status, code: other.body?.error?.code }).toEqual({ status: 409, code: 'idempotency_key_in_use' });
    } finally {
      held.open();
    }
    expect((await first).status).toBe(200);

    // An error is not stored: 429 now (tested less than 5 s ago) leaves the key free for a later try.
    const key2 = `k-${rand()}`;
    const limited = await call(t, 'post', `/v1/webhooks/${w.id}/test`, undefined, key2);
    expect(limited.status).toBe(429);
    const [row] = await db.query(`SELECT 1 FROM idempotency_keys WHERE connection_id = $1 AND idempotency_key = $2`, [t.connectionId, key2]);
    expect(row).toBeUndefined();
  }, 30_000);
});
