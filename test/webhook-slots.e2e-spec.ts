import { AppConfig } from '@kernel/config';
import { Metrics, METRICS } from '@kernel/metrics';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { DeliveryQueues, SLOT_KEYS_TTL_MS, WebhookSlots } from '@features/webhooks/worker';

/**
 * The per-webhook slot rules (the Lua scripts) against the real Redis (REDIS_URL). What the
 * scripts hand back to be queued again is recorded by a queue producer that only writes down its calls.
 */
describe('WebhookSlots: the per-webhook cap on attempts in flight (Lua, real Redis)', () => {
  const prefix = `slots-spec-${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  let requeued: Array<[queue: 'f' | 'r', id: string]>;
  let metrics: Metrics;

  const make = (cap: number, leaseMs?: number, client: Redis = redis): WebhookSlots => {
    const config = AppConfig.fromEnv({ REDIS_PREFIX: prefix, WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: String(cap) });
    const queues = {
      first: async (ids: string[]) => ids.forEach((id) => requeued.push(['f', id])),
      retry: async (id: string) => void requeued.push(['r', id]),
    } as unknown as DeliveryQueues;
    const slots = new WebhookSlots(client, config, queues, metrics);
    if (leaseMs) slots.leaseMs = leaseMs;
    return slots;
  };
  const hook = () => randomBytes(6).toString('hex');
  const leases = (s: WebhookSlots, w: string) => redis.zrange(s.keys(w)[0], 0, -1);
  const parked = (s: WebhookSlots, w: string) => redis.zrange(s.keys(w)[1], 0, -1);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  });
  beforeEach(() => {
    requeued = [];
    metrics = new Metrics();
  });
  const parkedCount = async () => (await metrics.counter(METRICS.webhookParked).get()).values[0]?.value ?? 0;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('lets the cap in, refuses the next; parked deliveries get freed slots oldest first, back on the queue they came from', async () => {
    const s = make(2);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    expect(await s.enter(w, 'b', 'f')).toBe(true);
    expect(await s.enter(w, 'c', 'f')).toBe(false);
    expect(await s.enter(w, 'd', 'r')).toBe(false);
    await s.park(w, 'c', 'f');
    await s.park(w, 'd', 'r');
    expect(await parked(s, w)).toEqual(['c', 'd']);
    expect(requeued).toEqual([]);

    await s.leave(w, 'a');
    // c is handed a's slot (a lease of its own) and queued again on the first-attempt queue.
    expect(requeued).toEqual([['f', 'c']]);
    expect((await leases(s, w)).sort()).toEqual(['b', 'c']);
    expect(await parked(s, w)).toEqual(['d']);
    // Its job then goes through on the slot it holds; a newcomer does not get in.
    expect(await s.enter(w, 'c', 'f')).toBe(true);
    expect(await s.enter(w, 'e', 'f')).toBe(false);

    await s.leave(w, 'b');
    expect(requeued).toEqual([
      ['f', 'c'],
      ['r', 'd'],
    ]);
    expect((await leases(s, w)).sort()).toEqual(['c', 'd']);
  });

  it("the relay's admission: a webhook with a free slot gets every new delivery queued; a full one gets them parked in order, without a job", async () => {
    const s = make(2);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    const batch = (...ids: string[]) => ids.map((id) => ({ id, webhookId: w }));
    // One slot free: all queued; each takes its slot when its attempt starts.
    expect(await s.admit(batch('n1', 'n2'))).toEqual(['n1', 'n2']);
    expect(await parked(s, w)).toEqual([]);
    expect(await s.enter(w, 'n1', 'f')).toBe(true);
    expect(await s.enter(w, 'n2', 'f')).toBe(false);
    await s.park(w, 'n2', 'f');
    // Full: the next ones are parked behind n2, never queued.
    expect(await s.admit(batch('n3', 'n4'))).toEqual([]);
    expect(await parked(s, w)).toEqual(['n2', 'n3', 'n4']);
    // Counted as they are made to wait: n2 at its attempt, n3 and n4 at admission.
    expect(await parkedCount()).toBe(3);
    await s.leave(w, 'a');
    expect(requeued).toEqual([['f', 'n2']]);
    // Another webhook's deliveries are not held back by this one.
    const other = hook();
    expect(await s.admit([{ id: 'o1', webhookId: other }])).toEqual(['o1']);
  });

  it('a slot freed between the refusal and the park is taken at once: the delivery is queued again, not left parked', async () => {
    const s = make(1);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    expect(await s.enter(w, 'b', 'r')).toBe(false);
    await s.leave(w, 'a'); // nothing is parked yet
    expect(requeued).toEqual([]);
    await s.park(w, 'b', 'r');
    expect(requeued).toEqual([['r', 'b']]);
    expect(await parked(s, w)).toEqual([]);
    expect(await leases(s, w)).toEqual(['b']);
  });

  it('the enters (and leaves) of one turn go to Redis in one call per webhook, answered as if each had asked alone in turn', async () => {
    const s = make(2);
    const [w1, w2] = [hook(), hook()];
    const calls = { enter: 0, leave: 0 };
    const r = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const [enter, leave] = [r.webhookSlotsEnter, r.webhookSlotsLeave];
    r.webhookSlotsEnter = (...args) => (calls.enter++, enter.apply(redis, args));
    r.webhookSlotsLeave = (...args) => (calls.leave++, leave.apply(redis, args));
    try {
      const verdicts = await Promise.all([s.enter(w1, 'a', 'f'), s.enter(w1, 'b', 'r'), s.enter(w2, 'c', 'f'), s.enter(w1, 'd', 'f'), s.enter(w1, 'e', 'r')]);
      expect(verdicts).toEqual([true, true, true, false, false]);
      expect(calls.enter).toBe(2);
      expect((await leases(s, w1)).sort()).toEqual(['a', 'b']);
      // The refused are parked once their job ends, as when they asked alone; the same-turn leaves free both slots for them.
      await s.park(w1, 'd', 'f');
      await s.park(w1, 'e', 'r');
      await Promise.all([s.leave(w1, 'a'), s.leave(w1, 'b'), s.leave(w2, 'c')]);
      expect(calls.leave).toBe(2);
      expect(requeued).toEqual([
        ['f', 'd'],
        ['r', 'e'],
      ]);
      expect((await leases(s, w1)).sort()).toEqual(['d', 'e']);
      expect(await leases(s, w2)).toEqual([]);
      expect(await parkedCount()).toBe(2);
    } finally {
      r.webhookSlotsEnter = enter;
      r.webhookSlotsLeave = leave;
    }
  });

  it('webhooks do not share slots', async () => {
    const s = make(1);
    const [w1, w2] = [hook(), hook()];
    expect(await s.enter(w1, 'a', 'f')).toBe(true);
    expect(await s.enter(w1, 'b', 'f')).toBe(false);
    expect(await s.enter(w2, 'c', 'f')).toBe(true);
  });

  it('leases expire (a worker killed mid-attempt): the sweep hands their slots to parked deliveries and names the lost ones', async () => {
    const s = make(2, 200);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    expect(await s.enter(w, 'b', 'f')).toBe(true);
    expect(await s.enter(w, 'c', 'r')).toBe(false);
    await s.park(w, 'c', 'r');
    const overdue = ['a', 'b', 'c', 'x'].map((id) => ({ id, attempts: 0, webhookId: w, nextAttemptAt: new Date() }));
    // While the leases hold, nothing is lost but x (no job, not parked, not in flight).
    expect((await s.unheld(overdue)).map((d) => d.id)).toEqual(['x']);
    expect(requeued).toEqual([]);

    await sleep(300);
    // Expired: c gets a slot (queued again on its queue), a and b were lost with their worker.
    expect((await s.unheld(overdue)).map((d) => d.id).sort()).toEqual(['a', 'b', 'x']);
    expect(requeued).toEqual([['r', 'c']]);
    expect(await leases(s, w)).toEqual(['c']);
  });

  it('a parked delivery keeps its place: after an expiry the oldest parked one gets the slot before a newcomer', async () => {
    const s = make(1, 200);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    expect(await s.enter(w, 'b', 'f')).toBe(false);
    await s.park(w, 'b', 'f');
    await sleep(300);
    expect(await s.enter(w, 'newcomer', 'f')).toBe(false);
    expect(requeued).toEqual([['f', 'b']]);
    expect(await leases(s, w)).toEqual(['b']);
  });

  it('a delivery not attempted after all (given up, already done) gives back a slot it was handed', async () => {
    const s = make(1);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    expect(await s.enter(w, 'b', 'f')).toBe(false);
    await s.park(w, 'b', 'f');
    expect(await s.enter(w, 'c', 'f')).toBe(false);
    await s.park(w, 'c', 'f');
    await s.leave(w, 'a');
    expect(requeued).toEqual([['f', 'b']]);
    await s.leave(w, 'b'); // b's job found it given up
    expect(requeued).toEqual([
      ['f', 'b'],
      ['f', 'c'],
    ]);
  });

  it('parking twice keeps the first place; a delivery in flight is not parked', async () => {
    const s = make(1);
    const w = hook();
    expect(await s.enter(w, 'a', 'f')).toBe(true);
    await s.park(w, 'b', 'f');
    await s.park(w, 'c', 'f');
    await s.park(w, 'b', 'r');
    expect(await parked(s, w)).toEqual(['b', 'c']);
    await s.park(w, 'a', 'f');
    expect(await parked(s, w)).toEqual(['b', 'c']);
    await s.leave(w, 'a');
    expect(requeued).toEqual([['f', 'b']]);
  });

  it('keys live under REDIS_PREFIX with the webhook id as hash tag, and expire when idle', async () => {
    const s = make(1);
    const w = hook();
    expect(s.keys(w)).toEqual([`${prefix}:webhook-slots:{${w}}:leases`, `${prefix}:webhook-slots:{${w}}:parked`, `${prefix}:webhook-slots:{${w}}:queues`]);
    await s.enter(w, 'a', 'f');
    await s.park(w, 'b', 'r');
    for (const key of s.keys(w)) {
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(SLOT_KEYS_TTL_MS);
    }
  });

  it('while Redis is unreachable the cap is not applied: attempts go ahead and nothing waits for Redis', async () => {
    const down = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 1, commandTimeout: 500, retryStrategy: () => null });
    down.on('error', () => undefined);
    try {
      const s = make(1, undefined, down);
      const w = hook();
      expect(await s.enter(w, 'a', 'f')).toBe(true);
      expect(await s.enter(w, 'b', 'f')).toBe(true);
      await s.leave(w, 'a');
      const overdue = [{ id: 'x', attempts: 1, webhookId: w, nextAttemptAt: new Date() }];
      expect(await s.unheld(overdue)).toEqual(overdue);
    } finally {
      down.disconnect();
    }
  });
});
