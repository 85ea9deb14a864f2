import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig, RateLimitPolicy } from '@kernel/config';
import { DomainError } from '@kernel/core';
import { dialectOf } from '@web/http';
import { Metrics, METRICS } from '@kernel/metrics';
import { REDIS, RedisOutage } from '@kernel/redis';
import type { Response } from 'express';
import Redis from 'ioredis';
import { createHash } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { AuthenticatedRequest } from './key-gate';
import { formatRateLimit, formatRateLimitPolicy, retryAfterSeconds } from './rate-limit-headers';

/**
 * Takes a token from a bucket for each of ARGV[4] calls, in order, atomically (one script, so replicas
 * cannot interleave between the read and the write). KEYS[1] the bucket (a hash: `tk` tokens left,
 * `ts` when, in microseconds); ARGV: tokens per second, burst, idle TTL in ms, number of calls. Time is
 * Redis's own (TIME), so replicas whose clocks differ still agree. A missing bucket is a full one: the
 * TTL lets an idle bucket vanish once it would have filled anyway. Taking for n calls at once is
 * taking for each in turn: the first ones get a token while a whole one is left, the rest none.
 * Answers {calls that got a token, thousandths of a token left after them}.
 */
export const TAKE_TOKENS_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local calls = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local kept = redis.call('HMGET', KEYS[1], 'tk', 'ts')
local tokens = tonumber(kept[1])
local ts = tonumber(kept[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
elseif now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000000)
  ts = now
end
local taken = math.max(0, math.min(calls, math.floor(tokens)))
tokens = tokens - taken
redis.call('HSET', KEYS[1], 'tk', string.format('%.6f', tokens), 'ts', string.format('%d', ts))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {taken, math.floor(tokens * 1000)}
`;
const TAKE_TOKENS_SHA = createHash('sha1').update(TAKE_TOKENS_LUA).digest('hex');

/** What a call found in its bucket. */
export interface TakenToken {
  taken: boolean;
  /** Tokens left after the call (fractional: the bucket refills continuously). */
  tokens: number;
}

/** The calls of one turn of the event loop waiting on one bucket. */
interface Batch {
  policy: RateLimitPolicy;
  ttlMs: string;
  calls: ((found: TakenToken | null) => void)[];
}

/**
 * The per-connection rate limit: a token bucket in Redis per connection and policy (REST, and an
 * interface with a policy of its own, SCIM, on its own bucket so a large directory import never
 * starves REST calls). The calls that reach
 * the limit in one turn of the event loop take their tokens together: one EVALSHA per bucket per turn
 * (each call still gets its own answer, in arrival order, as if taken one by one), instead of one
 * per call, whose client-side cost (ioredis' command, reply and socket write) would otherwise be
 * paid by every keyed call (`bench/me.bench.js` measures it).
 * Every answer to an admitted key carries `RateLimit-Policy` and `RateLimit`; an empty bucket answers
 * 429 `rate_limited` with `Retry-After` (in the schema of the interface that owns the path).
 *
 * While Redis is unreachable calls are not limited (fail open), as the refused-key throttle does
 * not count refusals then: nothing is asked of Redis while its connection is down, no call waits,
 * the outage is logged once, and answers carry `RateLimit-Policy` but no `RateLimit` (nothing is
 * known of the bucket).
 */
@Injectable()
export class ConnectionRateLimit {
  private readonly outage: RedisOutage;
  private readonly policies: Record<RateLimitPolicy['name'], { policy: RateLimitPolicy; header: string; ttlMs: string }>;
  private readonly limited: Counter<'policy'>;
  private pending = new Map<string, Batch>();
  private flushScheduled = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    this.limited = metrics.counter(METRICS.rateLimited);
    this.outage = new RedisOutage(redis, new Logger(ConnectionRateLimit.name), 'calls are not rate limited', 'calls are rate limited again');
    const entry = (policy: RateLimitPolicy) => ({
      policy,
      header: formatRateLimitPolicy(policy),
      // An idle bucket is full after burst / rate seconds, and a missing bucket reads as full: it may vanish then.
      ttlMs: String(Math.ceil((policy.burst / policy.perSecond) * 1000) + 1000),
    });
    this.policies = { rest: entry(config.rateLimits.rest), scim: entry(config.rateLimits.scim) } satisfies Record<keyof AppConfig['rateLimits'], unknown>;
  }

  /**
   * Takes a call from the bucket of `req`'s connection (the policy of the interface that owns the
   * path, see ErrorDialect; REST's elsewhere), sets
   * the rate-limit headers on `res`, and rejects with 429 when the bucket is empty. Never rejects
   * for Redis: while it is unreachable the call goes through.
   */
  async admit(req: AuthenticatedRequest, res: Response): Promise<true> {
    const own = dialectOf(req.originalUrl ?? req.url)?.rateLimit;
    const { policy, header, ttlMs } = this.policies[own?.policy ?? 'rest'];
    res.setHeader('RateLimit-Policy', header);
    const connectionId = req.principal?.connectionId;
    if (connectionId === undefined) return true;
    const found = await this.take(policy, connectionId, ttlMs);
    if (!found) return true;
    res.setHeader('RateLimit', formatRateLimit(policy, found.tokens));
    if (found.taken) return true;
    const wait = retryAfterSeconds(policy, found.tokens);
    this.limited.inc({ policy: policy.name });
    throw new DomainError(
      'rate_limited',
      `This connection made more calls than its rate limit allows (${policy.perSecond} a second, ${policy.burst} at once${own ? `, for ${own.label}` : ''}). Try again in ${wait} s.`,
      { 'Retry-After': String(wait) },
    );
  }

  /**
   * One token from the bucket; null when Redis could not answer (the call is then not limited). The
   * call joins its bucket's batch for this turn of the event loop; the batch is sent once the turn's
   * I/O callbacks have run (setImmediate), so a call waits no longer than the current turn for it.
   */
  take(policy: RateLimitPolicy, connectionId: string, ttlMs = this.policies[policy.name].ttlMs): Promise<TakenToken | null> {
    if (!this.outage.mayTry()) return Promise.resolve(null);
    const key = `${this.config.redisPrefix}:ratelimit:${policy.name}:${connectionId}`;
    return new Promise((resolve) => {
      let batch = this.pending.get(key);
      if (!batch) this.pending.set(key, (batch = { policy, ttlMs, calls: [] }));
      batch.calls.push(resolve);
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const batches = this.pending;
    this.pending = new Map();
    for (const [key, batch] of batches) void this.takeFor(key, batch);
  };

  /** Tokens for a batch's calls in one script call; each call is told its own outcome. Never rejects. */
  private async takeFor(key: string, { policy, ttlMs, calls }: Batch): Promise<void> {
    const args = [String(policy.perSecond), String(policy.burst), ttlMs, String(calls.length)];
    try {
      const [taken, milli] = (await this.redis.evalsha(TAKE_TOKENS_SHA, 1, key, ...args).catch((err: Error) => {
        // A Redis restarted (or flushed) forgets its scripts: EVAL sends it again, and caches it.
        if (/^NOSCRIPT/.test(err.message)) return this.redis.eval(TAKE_TOKENS_LUA, 1, key, ...args);
        throw err;
      })) as [number, number];
      this.outage.worked();
      const left = milli / 1000;
      // Call i (in arrival order) got a token if i < taken, and left behind it the tokens the later takers still had.
      calls.forEach((answer, i) => answer(i < taken ? { taken: true, tokens: left + (taken - i - 1) } : { taken: false, tokens: left }));
    } catch (err) {
      this.outage.failed(err);
      for (const answer of calls) answer(null);
    }
  }
}
