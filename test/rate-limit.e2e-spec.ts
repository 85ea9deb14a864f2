import { ConnectionRateLimit } from '@web/auth';
import { AppConfig } from '@kernel/config';
import { REDIS } from '@kernel/redis';
import Redis from 'ioredis';
import { makeTenant, startApi, Tenant, TestApi, useApi } from './support/api';
import { PrivateRedis } from './support/private-servers';
import { scim, SCIM } from './support/scim-client';
import { until } from './support/until';

type Res = { status: number; body: any; headers: Record<string, string | undefined> };

// Small buckets, so that a test empties one in a few calls. The refill (1 call a second) is slow next
// to the calls themselves (milliseconds each), which is what lets a drain below end in a 429.
const LIMITS = { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5', SCIM_RATE_LIMIT_PER_SECOND: '1', SCIM_RATE_LIMIT_BURST: '3' };
const REST_POLICY = '"rest";q=5;w=5';
const SCIM_POLICY = '"scim";q=3;w=3';
const RATE_LIMIT = /^"(rest|scim)";r=(\d+);t=(\d+)$/;
const SLOW = 60_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const remaining = (res: Res): number => Number(RATE_LIMIT.exec(res.headers['ratelimit'] ?? '')?.[2] ?? NaN);

/**
 * Calls until the first 429 (at most `max` calls), every call before it answered 200; answers how
 * many went through and the 429. With a bucket of `burst` refilled at 1 a second, at least `burst`
 * go through, and a 429 comes long before `max` (that would take `max - burst` seconds of calls).
 */
async function drain(call: (i: number) => PromiseLike<unknown>, max = 40): Promise<{ admitted: number; refused: Res }> {
  for (let i = 0; i < max; i++) {
    const res = (await call(i)) as Res;
    if (res.status === 429) return { admitted: i, refused: res };
    expect(res.status).toBe(200);
  }
  throw new Error(`no 429 after ${max} calls`);
}

describe('per-connection rate limit', () => {
  const { api } = useApi({ env: LIMITS });
  const me = (t: Tenant, on: TestApi = api) => on.http().get('/v1/me').set(t.auth) as unknown as Promise<Res>;

  it('every answer to a valid key carries RateLimit-Policy and RateLimit (successes and errors alike); answers without a valid key carry neither', async () => {
    const t = await makeTenant(api.app);
    const first = await me(t);
    expect(first.status).toBe(200);
    // A fresh bucket holds the burst; this call took one: 4 left, full again in 1 second.
    expect(first.headers['ratelimit-policy']).toBe(REST_POLICY);
    expect(first.headers['ratelimit']).toBe('"rest";r=4;t=1');

    const missing = (await api.http().get('/v1/no-such-thing').set(t.auth)) as unknown as Res;
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    expect(missing.headers['ratelimit-policy']).toBe(REST_POLICY);
    expect(missing.headers['ratelimit']).toMatch(RATE_LIMIT);

    const refused = (await api
      .http()
      .get('/v1/me')
      .set('Authorization', `Bearer svc_${'0'.repeat(64)}`)) as unknown as Res;
    expect(refused.status).toBe(401);
    const description = (await api.http().get('/v1/openapi.json')) as unknown as Res;
    expect(description.status).toBe(200);
    for (const res of [refused, description]) {
      expect([res.headers['ratelimit-policy'], res.headers['ratelimit']]).toEqual([undefined, undefined]);
    }
  });

  it('the served OpenAPI description documents the 429 and the fields on the answers of every keyed operation, in the form answered', async () => {
    const doc = ((await api.http().get('/v1/openapi.json')) as unknown as Res).body;
    const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
    let keyed = 0;
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        if (Array.isArray(op.security) && op.security.length === 0) continue;
        keyed++;
        const where = `${method.toUpperCase()} ${path}`;
        const responses = op.responses as Record<string, { description: string; headers?: Record<string, unknown> }>;
        expect({ where, description: responses['429']?.description }).toEqual({ where, description: expect.stringContaining('rate limit') });
        expect({ where, headers: responses['429'].headers }).toEqual({
          where,
          headers: expect.objectContaining({ 'Retry-After': ref('Retry-After'), RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') }),
        });
        const success = Object.keys(responses).find((s) => s.startsWith('2'))!;
        expect({ where, headers: responses[success].headers }).toEqual({
          where,
          headers: expect.objectContaining({ RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') }),
        });
        expect({ where, headers: Object.keys(responses['401'].headers ?? {}) }).toEqual({ where, headers: ['X-Request-Id'] });
      }
    }
    expect(keyed).toBeGreaterThan(20);
    expect(doc.info.description).toContain('draft-ietf-httpapi-ratelimit-headers-10');

    const t = await makeTenant(api.app);
    const res = await me(t);
    expect(res.headers['ratelimit-policy']).toMatch(new RegExp(doc.components.headers['RateLimit-Policy'].schema.pattern));
    expect(res.headers['ratelimit']).toMatch(new RegExp(doc.components.headers.RateLimit.schema.pattern));
  });

  it('an empty bucket answers 429 rate_limited with Retry-After, to that connection only, and refills', async () => {
    const t = await makeTenant(api.app);
    const { admitted, refused } = await drain(() => me(t));
    expect(admitted).toBeGreaterThanOrEqual(5);
    expect(refused.body).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/rate limit/) } });
    expect(refused.headers['x-request-id']).toBeTruthy();
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(refused.headers['ratelimit-policy']).toBe(REST_POLICY);
    expect(refused.headers['ratelimit']).toMatch(/^"rest";r=0;t=[1-5]$/);

    // Another connection has a bucket of its own.
    const other = await makeTenant(api.app);
    expect(remaining(await me(other))).toBe(4);

    // Retry-After is enough: the bucket holds a call again.
    await sleep(Number(refused.headers['retry-after']) * 1000 + 100);
    const again = await me(t);
    expect(again.status).toBe(200);
    expect(again.headers['ratelimit']).toMatch(RATE_LIMIT);
  });

  it('calls that arrive in one turn take their tokens in one script call per bucket, each answered as if taken in turn', async () => {
    const t = await makeTenant(api.app);
    const other = await makeTenant(api.app);
    const limit = api.app.get(ConnectionRateLimit);
    const rest = api.app.get(AppConfig).rateLimits.rest;
    const redis = api.app.get<Redis>(REDIS);
    const scripts = jest.spyOn(redis, 'evalsha');
    try {
      // Eight calls of one connection and two of another, all in this turn: a bucket of 5 (1 a second).
      const found = await Promise.all([
        ...Array.from({ length: 8 }, () => limit.take(rest, t.connectionId)),
        limit.take(rest, other.connectionId),
        limit.take(rest, other.connectionId),
      ]);
      expect(scripts).toHaveBeenCalledTimes(2); // one per bucket, not one per call
      const mine = found.slice(0, 8);
      expect(mine.map((f) => f?.taken)).toEqual([true, true, true, true, true, false, false, false]);
      // Calls left behind each taker: 4, 3, 2, 1, 0 (plus whatever refilled meanwhile); the refused see what is left.
      expect(mine.map((f) => Math.floor(f!.tokens))).toEqual([4, 3, 2, 1, 0, 0, 0, 0]);
      expect(found.slice(8).map((f) => [f?.taken, Math.floor(f!.tokens)])).toEqual([
        [true, 4],
        [true, 3],
      ]);
    } finally {
      scripts.mockRestore();
    }
    // The bucket in Redis holds the same: the next call through the api finds it empty.
    const next = await me(t);
    expect(next.status).toBe(429);
  });

  it("SCIM has a bucket of its own: emptying it leaves REST untouched, and its 429 is RFC 7644's error", async () => {
    const t = await makeTenant(api.app);
    const { admitted, refused } = await drain(() => scim(api, t, 'get', '/Users?count=1'));
    expect(admitted).toBeGreaterThanOrEqual(3);
    expect(refused.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(refused.body).toEqual({ schemas: [SCIM.error], status: '429', detail: expect.stringMatching(/rate limit/) });
    expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/);
    expect(refused.headers['ratelimit-policy']).toBe(SCIM_POLICY);
    expect(refused.headers['ratelimit']).toMatch(/^"scim";r=0;t=[1-3]$/);

    // The same connection's REST bucket was never touched: full, so this call leaves 4.
    const rest = await me(t);
    expect(rest.status).toBe(200);
    expect(rest.headers['ratelimit-policy']).toBe(REST_POLICY);
    expect(rest.headers['ratelimit']).toBe('"rest";r=4;t=1');
  });

  it('keeps each bucket as one Redis key under REDIS_PREFIX, with a TTL so an idle bucket vanishes once it would be full', async () => {
    const t = await makeTenant(api.app);
    await me(t);
    const redis = api.app.get<Redis>(REDIS);
    const key = `${api.config.redisPrefix}:ratelimit:rest:${t.connectionId}`;
    const ttl = await redis.pttl(key);
    // burst / rate = 5 s to fill, plus a second of margin.
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(6000);
    expect(await redis.exists(`${api.config.redisPrefix}:ratelimit:scim:${t.connectionId}`)).toBe(0);
  });

  it('replicas share one bucket per connection (its state is only in Redis)', async () => {
    const other = await startApi(LIMITS);
    try {
      const t = await makeTenant(api.app);
      // Calls alternate between the two replicas: with a bucket per replica, 10 (plus 2 a second of
      // refill) would go through before the first 429; with the one shared bucket, 5 plus 1 a second.
      // The bound follows the time the calls took, so a slow machine cannot make it pass or fail.
      const started = Date.now();
      const { admitted, refused } = await drain((i) => me(t, i % 2 === 0 ? api : other));
      const seconds = Math.ceil((Date.now() - started) / 1000);
      expect(admitted).toBeGreaterThanOrEqual(5);
      expect(admitted).toBeLessThanOrEqual(5 + seconds);
      expect(refused.body.error.code).toBe('rate_limited');
    } finally {
      await other.close();
    }
  });
});

describe('per-connection rate limit while Redis is unreachable', () => {
  let redis: PrivateRedis;
  let api: TestApi;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    api = await startApi({ ...LIMITS, REDIS_URL: redis.url });
  }, SLOW);
  afterAll(async () => {
    await api?.close();
    await redis?.stop();
  }, SLOW);

  it(
    'lets calls through without RateLimit (as the refused-key throttle stops counting), and limits them again once Redis is back, empty',
    async () => {
      const t = await makeTenant(api.app);
      const call = () => api.http().get('/v1/me').set(t.auth) as unknown as Promise<Res>;
      expect((await call()).headers['ratelimit']).toBe('"rest";r=4;t=1');

      await redis.stop();
      // More calls than the bucket holds: none is refused, none answers 500.
      for (let i = 0; i < 8; i++) {
        const res = await call();
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe(REST_POLICY);
        expect(res.headers['ratelimit']).toBeUndefined();
      }

      // Back, empty (its scripts forgotten too): the next limited call starts a fresh bucket.
      await redis.resume();
      const limited = await until(async () => {
        const res = await call();
        expect(res.status).toBe(200);
        return res.headers['ratelimit'] ? res : null;
      }, 'a call limited again');
      expect(limited.headers['ratelimit']).toBe('"rest";r=4;t=1');
    },
    SLOW,
  );
});
