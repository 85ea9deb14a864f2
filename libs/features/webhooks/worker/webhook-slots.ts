import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { MicroBatch } from '@kernel/core';
import { ANSWER_TIMEOUT_MS } from '../webhook-sender';
import { AttemptGate } from '../delivery-attempts.service';
import { OverdueDelivery } from '../delivery-recovery.service';
import { RESOLVE_TIMEOUT_MS } from '../host-resolver';
import { Metrics, METRICS } from '@kernel/metrics';
import { isRedisUnavailable, REDIS, RedisOutage } from '@kernel/redis';
import type { DeliveryJob } from '@kernel/queue';
import type { Job } from 'bullmq';
import type Redis from 'ioredis';
import type { Counter } from 'prom-client';
import { DeliveryQueues } from './delivery-queues';

/**
 * A lease outlives the longest attempt (the name lookup's 5 s, then the answer's 10 s) by this much,
 * so an attempt still running never loses its slot, and a worker killed mid-attempt frees it by itself.
 */
export const LEASE_MARGIN_MS = 5000;
/** The webhook's keys vanish this long after their last change (an idle webhook leaves nothing behind). */
export const SLOT_KEYS_TTL_MS = 24 * 3_600_000;
/** Enters (and leaves) asked for in one turn of the event loop go to Redis together, at most this many per call. */
const SLOT_BATCH_MAX = 200;

/** Which queue a parked delivery came from, and goes back to when a slot frees: 'f' first attempts, 'r' retries. */
export type SlotQueue = 'f' | 'r';
export interface Woken {
  id: string;
  queue: SlotQueue;
}
interface Asking {
  webhookId: string;
  id: string;
  queue?: SlotQueue;
}

/**
 * The rules, in Lua so each step is one atomic command however many workers share the webhook.
 * Per webhook three keys (one hash slot: the webhook id is the hash tag, so a Redis Cluster takes them):
 * `leases`, a sorted set of the deliveries in flight scored by when their lease expires; `parked`, a
 * sorted set of the deliveries waiting for a slot scored by when they were parked (oldest first);
 * `queue`, a hash of which queue each parked delivery came from. Times are Redis's own clock (TIME),
 * so workers whose clocks differ still agree. Each script first drops expired leases, then hands free
 * slots to the oldest parked deliveries (each gets a lease at once, so a newcomer cannot take the slot
 * before its job runs) and returns them as "woken": the caller queues them again.
 */
const PRELUDE = `
local leases, parked, queues = KEYS[1], KEYS[2], KEYS[3]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cap = tonumber(ARGV[1])
local lease_until = now + tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', leases, '-inf', now)
local function fill()
  local woken = {}
  local free = cap - redis.call('ZCARD', leases)
  if free <= 0 then return woken end
  local popped = redis.call('ZPOPMIN', parked, free)
  for i = 1, #popped, 2 do
    local id = popped[i]
    redis.call('ZADD', leases, lease_until, id)
    woken[#woken + 1] = id
    woken[#woken + 1] = redis.call('HGET', queues, id) or 'f'
    redis.call('HDEL', queues, id)
  end
  return woken
end
local function touch()
  redis.call('PEXPIRE', leases, ttl)
  redis.call('PEXPIRE', parked, ttl)
  redis.call('PEXPIRE', queues, ttl)
end
`;

/**
 * Before attempts (ARGV[4..] the deliveries of this webhook, in order; one call answers every attempt
 * of the webhook that asked in the same turn of a worker's event loop): for each, 1 = go (it holds a
 * lease now), 0 = the webhook is full — as if each had asked alone, in that order. A delivery already
 * holding a lease (handed a slot while parked) goes and its lease is renewed. Returns { verdicts,
 * woken pairs }, the asking deliveries never among the woken.
 */
const ENTER = `${PRELUDE}
local woken = fill()
local verdicts = {}
local asking = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  asking[id] = true
  local verdict = 0
  if redis.call('ZSCORE', leases, id) then
    verdict = 1
  elseif redis.call('ZCARD', leases) < cap then
    verdict = 1
  end
  if verdict == 1 then redis.call('ZADD', leases, lease_until, id) end
  verdicts[#verdicts + 1] = verdict
end
local others = {}
for i = 1, #woken, 2 do
  if not asking[woken[i]] then others[#others + 1] = woken[i]; others[#others + 1] = woken[i + 1] end
end
touch()
return { verdicts, others }`;

/**
 * Parks a delivery whose job has ended (ARGV[4] the delivery, ARGV[5] its queue): 0 = parked; 1 =
 * a slot is free after all (freed since the attempt was refused): it holds a lease, queue it again
 * now; 2 = it holds a lease already (another job of it is in flight, or it was handed a slot): nothing
 * to do. Then the woken pairs.
 */
const PARK = `${PRELUDE}
local id = ARGV[4]
local woken = fill()
local verdict = 0
if redis.call('ZSCORE', leases, id) then
  verdict = 2
elseif redis.call('ZCARD', leases) < cap then
  redis.call('ZADD', leases, lease_until, id)
  verdict = 1
else
  redis.call('ZADD', parked, 'NX', now, id)
  redis.call('HSETNX', queues, id, ARGV[5])
end
local out = { verdict }
for i = 1, #woken do out[#out + 1] = woken[i] end
touch()
return out`;

/** After attempts, or instead of them (ARGV[4..] deliveries of this webhook): their leases go; returns the woken pairs. */
const LEAVE = `${PRELUDE}
for i = 4, #ARGV do redis.call('ZREM', leases, ARGV[i]) end
local woken = fill()
touch()
return woken`;

/**
 * The recovery sweep's question (ARGV[4..] overdue deliveries of this webhook): returns
 * { woken pairs, the given deliveries neither in flight nor parked (their job was lost) }.
 */
const SWEEP = `${PRELUDE}
local woken = fill()
local lost = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if not redis.call('ZSCORE', leases, id) and not redis.call('ZSCORE', parked, id) then lost[#lost + 1] = id end
end
touch()
return { woken, lost }`;

/**
 * The relay's admission of new deliveries (ARGV[4..], in order). A webhook with a free slot gets them
 * all queued (returned), each taking its slot when its attempt starts (ENTER), so a healthy webhook's
 * deliveries are never parked however many are queued; a webhook whose slots are all taken (a slow or
 * hanging receiver) gets them parked at once, in order, without ever having a job.
 * Returns { to queue, woken pairs }.
 */
const ADMIT = `${PRELUDE}
local woken = fill()
local full = redis.call('ZCARD', leases) >= cap
local go = {}
for i = 4, #ARGV do
  local id = ARGV[i]
  if not full or redis.call('ZSCORE', leases, id) then
    go[#go + 1] = id
  elseif not redis.call('ZSCORE', parked, id) then
    redis.call('ZADD', parked, 'NX', now + (i - 4) / 1000, id)
    redis.call('HSETNX', queues, id, 'f')
  end
end
touch()
return { go, woken }`;

type Script = (k1: string, k2: string, k3: string, ...argv: Array<string | number>) => Promise<unknown>;
const SCRIPTS = { webhookSlotsEnter: ENTER, webhookSlotsPark: PARK, webhookSlotsLeave: LEAVE, webhookSlotsSweep: SWEEP, webhookSlotsAdmit: ADMIT } as const;
type Scripts = Record<keyof typeof SCRIPTS, Script>;

const byWebhook = (items: Asking[]): Map<string, Asking[]> => {
  const out = new Map<string, Asking[]>();
  for (const x of items) {
    const list = out.get(x.webhookId);
    if (list) list.push(x);
    else out.set(x.webhookId, [x]);
  }
  return out;
};

const pairs = (flat: unknown[]): Woken[] => {
  const out: Woken[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ id: String(flat[i]), queue: flat[i + 1] === 'r' ? 'r' : 'f' });
  return out;
};

/**
 * Fair delivery: at most WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK attempts in flight per webhook across
 * every worker, and the rest waiting without holding a worker slot. A delivery that finds its
 * webhook full is not attempted: its job ends (Postgres still says it is queued or waiting) and,
 * once BullMQ has removed the job, the delivery is parked in Redis. Each attempt that ends (and
 * each lease that expires) hands its slot to the oldest parked delivery, which is queued again at
 * once. Parked deliveries lost with Redis are overdue in Postgres, so the recovery sweep queues
 * them again; it skips those still parked or in flight (see `unheld`).
 *
 * While Redis is unreachable the cap is not applied (attempts go ahead; logged once per outage),
 * as the other Redis-backed limits degrade; no job can be fetched then anyway.
 */
@Injectable()
export class WebhookSlots {
  private readonly logger = new Logger(WebhookSlots.name);
  private readonly outage: RedisOutage;
  private readonly scripts: Scripts;
  /** How long a lease lasts (tests shorten it). */
  leaseMs = RESOLVE_TIMEOUT_MS + ANSWER_TIMEOUT_MS + LEASE_MARGIN_MS;
  /** Jobs whose attempt found the webhook full, by queue and delivery id: parked once BullMQ has removed the job. */
  private readonly refused = new Map<string, string>();
  private readonly parked: Counter;
  /** The attempts of a turn ask together: one script call per webhook for all of them (a busy webhook's attempts start and end in bursts). */
  private readonly enters = new MicroBatch<Asking, boolean>((items) => this.enterMany(items), SLOT_BATCH_MAX);
  private readonly leaves = new MicroBatch<Asking, void>((items) => this.leaveMany(items), SLOT_BATCH_MAX);

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
    private readonly queues: DeliveryQueues,
    metrics: Metrics,
  ) {
    this.parked = metrics.counter(METRICS.webhookParked);
    this.outage = new RedisOutage(redis, this.logger, 'attempts per webhook are not capped', 'attempts per webhook are capped again');
    const r = redis as unknown as Partial<Scripts> & Pick<Redis, 'defineCommand'>;
    for (const [name, lua] of Object.entries(SCRIPTS)) if (typeof r[name as keyof Scripts] !== 'function') r.defineCommand(name, { numberOfKeys: 3, lua });
    this.scripts = r as Scripts;
  }

  /** The webhook's keys, under REDIS_PREFIX, its id the hash tag. */
  keys(webhookId: string): [leases: string, parked: string, queues: string] {
    const base = `${this.config.redisPrefix}:webhook-slots:{${webhookId}}`;
    return [`${base}:leases`, `${base}:parked`, `${base}:queues`];
  }

  /** The gate one processor passes to DeliveryAttemptsService.attempt. */
  gate(queue: SlotQueue): AttemptGate {
    return {
      enter: (d) => this.enter(d.webhookId, d.id, queue),
      leave: (d) => this.leave(d.webhookId, d.id),
    };
  }

  /** Parks the deliveries whose job ended because their webhook was full, once BullMQ has removed the job. */
  watch(
    worker: { on(event: 'completed' | 'failed', listener: (job: Job<DeliveryJob> | undefined, result: unknown) => void): unknown },
    queue: SlotQueue,
  ): void {
    worker.on('completed', (job, result) => {
      if (!job) return;
      const key = `${queue}:${job.data.deliveryId}`;
      const webhookId = this.refused.get(key);
      this.refused.delete(key);
      if (result === 'parked' && webhookId) void this.park(webhookId, job.data.deliveryId, queue);
    });
    worker.on('failed', (job) => {
      if (job) this.refused.delete(`${queue}:${job.data.deliveryId}`);
    });
  }

  /** Whether the attempt may go now (it then holds a lease); asked together with the other attempts of this turn. */
  enter(webhookId: string, id: string, queue: SlotQueue): Promise<boolean> {
    return this.enters.push({ webhookId, id, queue });
  }

  /** Frees the delivery's slot (after its attempt, or when it turned out not to need one) and queues whoever gets it. */
  leave(webhookId: string, id: string): Promise<void> {
    return this.leaves.push({ webhookId, id });
  }

  private async enterMany(items: Asking[]): Promise<boolean[]> {
    const verdicts = new Map<Asking, boolean>();
    await Promise.all(
      [...byWebhook(items)].map(async ([webhookId, list]) => {
        const out = (await this.run(
          'webhookSlotsEnter',
          webhookId,
          list.map((x) => x.id),
        )) as [unknown[], unknown[]] | null;
        if (!out) return list.forEach((x) => verdicts.set(x, true));
        await this.wake(pairs(out[1]));
        list.forEach((x, i) => {
          const go = Number(out[0][i]) === 1;
          verdicts.set(x, go);
          if (!go) {
            this.refused.set(`${x.queue}:${x.id}`, webhookId);
            this.parked.inc();
          }
        });
      }),
    );
    return items.map((x) => verdicts.get(x) ?? true);
  }

  private async leaveMany(items: Asking[]): Promise<void[]> {
    await Promise.all(
      [...byWebhook(items)].map(async ([webhookId, list]) => {
        const out = (await this.run(
          'webhookSlotsLeave',
          webhookId,
          list.map((x) => x.id),
        )) as unknown[] | null;
        if (out) await this.wake(pairs(out));
      }),
    );
    return items.map(() => undefined);
  }

  /** Parks a refused delivery (its job is gone); queues it again at once if a slot freed meanwhile. */
  async park(webhookId: string, id: string, queue: SlotQueue): Promise<void> {
    const out = (await this.run('webhookSlotsPark', webhookId, [id, queue])) as unknown[] | null;
    if (!out) return;
    const woken = pairs(out.slice(1));
    if (Number(out[0]) === 1) woken.unshift({ id, queue });
    await this.wake(woken);
  }

  /**
   * The relay's admission: of the deliveries it has just made, those to queue now; those of a webhook
   * whose slots are all taken are parked at once, so a hanging receiver's backlog never reaches the
   * queue (nor passes through a worker slot) before its turn. While Redis is unreachable every one is
   * returned.
   */
  async admit(deliveries: Array<{ id: string; webhookId: string }>): Promise<string[]> {
    const byWebhook = new Map<string, string[]>();
    for (const d of deliveries) byWebhook.set(d.webhookId, [...(byWebhook.get(d.webhookId) ?? []), d.id]);
    const go: string[] = [];
    await Promise.all(
      [...byWebhook].map(async ([webhookId, ids]) => {
        const out = (await this.run('webhookSlotsAdmit', webhookId, ids)) as [unknown[], unknown[]] | null;
        if (!out) {
          go.push(...ids);
          return;
        }
        go.push(...out[0].map(String));
        if (ids.length > out[0].length) this.parked.inc(ids.length - out[0].length);
        await this.wake(pairs(out[1]));
      }),
    );
    return go;
  }

  /**
   * The recovery sweep's filter: of these overdue deliveries, those neither in flight nor parked
   * (their job was lost: queue them again); on the way, parked deliveries of these webhooks are
   * handed slots freed by expired leases (a worker killed mid-attempt) and queued. While Redis is
   * unreachable every one is returned, as before the cap.
   */
  async unheld(overdue: OverdueDelivery[]): Promise<OverdueDelivery[]> {
    const byWebhook = new Map<string, OverdueDelivery[]>();
    for (const d of overdue) byWebhook.set(d.webhookId, [...(byWebhook.get(d.webhookId) ?? []), d]);
    const lost: OverdueDelivery[] = [];
    await Promise.all(
      [...byWebhook].map(async ([webhookId, list]) => {
        const out = (await this.run(
          'webhookSlotsSweep',
          webhookId,
          list.map((d) => d.id),
        )) as [unknown[], unknown[]] | null;
        if (!out) {
          lost.push(...list);
          return;
        }
        const ids = new Set(out[1].map(String));
        lost.push(...list.filter((d) => ids.has(d.id)));
        await this.wake(pairs(out[0]));
      }),
    );
    return lost;
  }

  /** Queues woken deliveries on the queue they came from. A failure leaves them to the recovery sweep (their lease expires). */
  private async wake(woken: Woken[]): Promise<void> {
    if (woken.length === 0) return;
    try {
      await this.queues.first(woken.filter((w) => w.queue === 'f').map((w) => w.id));
      for (const w of woken.filter((x) => x.queue === 'r')) await this.queues.retry(w.id, 0);
    } catch (err) {
      this.logger.warn(`could not queue ${woken.length} deliveries given a slot (${(err as Error).message}); the recovery sweep will`);
    }
  }

  /** One script on the webhook's keys; null when Redis is unreachable or the script failed (the cap is then not applied). */
  private async run(name: keyof Scripts, webhookId: string, args: Array<string | number>): Promise<unknown> {
    if (!this.outage.mayTry()) return null;
    try {
      const out = await this.scripts[name](...this.keys(webhookId), this.config.webhookMaxInFlightPerWebhook, this.leaseMs, SLOT_KEYS_TTL_MS, ...args);
      this.outage.worked();
      return out;
    } catch (err) {
      if (isRedisUnavailable(err)) this.outage.failed(err);
      else this.logger.error(`${name} failed for webhook ${webhookId}: ${(err as Error).message}`);
      return null;
    }
  }
}
