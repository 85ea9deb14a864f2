import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig, RateLimitPolicy } from '@app/config';
import { DomainError } from '@app/core';
import { isScimPath } from '@app/http';
import { Metrics, METRICS } from '@app/metrics';
import { REDIS, RedisOutage } from '@app/redis';
import type { Response } from 'express';
import Redis from 'ioredis';
import { createHash } from 'node:crypto';
import type { Counter } from 'prom-client';
import type { AuthenticatedRequest } from './key-gate';
import { formatRateLimit, formatRateLimitPolicy, retryAfterSeconds } from './rate-limit-headers';

/**
 * Takes one token from a bucket, atomically (one script, so replicas cannot interleave between the
 * read and the write). KEYS[1] the bucket (a hash: `tk` tokens left, `ts` when, in microseconds);
 * ARGV: tokens per second, burst, idle TTL in ms. Time is Redis's own (TIME), so replicas whose
 * clocks differ still agree. A missing bucket is a full one: the TTL lets an idle bucket vanish once
 * it would have filled anyway. Answers {1 if taken else 0, thousandths of a token left}.
 */
export const TAKE_TOKEN_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
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
local taken = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 'tk', string.format('%.6f', tokens), 'ts', string.format('%d', ts))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {taken, math.floor(tokens * 1000)}
`;
const TAKE_TOKEN_SHA = createHash('sha1').update(TAKE_TOKEN_LUA).digest('hex');

/** What a call found in its bucket. */
export interface TakenToken {
  taken: boolean;
  /** Tokens left after the call (fractional: the bucket refills continuously). */
  tokens: number;
}

/**
 * The per-connection rate limit: a token bucket in Redis per connection and policy (REST, and SCIM
 * on its own bucket so a large directory import never starves REST calls), one EVALSHA per call.
 * Every answer to an admitted key carries `RateLimit-Policy` and `RateLimit`; an empty bucket answers
 * 429 `rate_limited` with `Retry-After` (under /scim/v2/, in RFC 7644's error schema).
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
    this.policies = { rest: entry(config.rateLimits.rest), scim: entry(config.rateLimits.scim) };
  }

  /**
   * Takes a call from the bucket of `req`'s connection (SCIM's under /scim/, REST's elsewhere), sets
   * the rate-limit headers on `res`, and rejects with 429 when the bucket is empty. Never rejects
   * for Redis: while it is unreachable the call goes through.
   */
  async admit(req: AuthenticatedRequest, res: Response): Promise<true> {
    const { policy, header, ttlMs } = this.policies[isScimPath(req) ? 'scim' : 'rest'];
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
      `This connection made more calls than its rate limit allows (${policy.perSecond} a second, ${policy.burst} at once${policy.name === 'scim' ? ', for SCIM' : ''}). Try again in ${wait} s.`,
      { 'Retry-After': String(wait) },
    );
  }

  /** One token from the bucket; null when Redis could not answer (the call is then not limited). */
  async take(policy: RateLimitPolicy, connectionId: string, ttlMs = this.policies[policy.name].ttlMs): Promise<TakenToken | null> {
    if (!this.outage.mayTry()) return null;
    const key = `${this.config.redisPrefix}:ratelimit:${policy.name}:${connectionId}`;
    const args = [String(policy.perSecond), String(policy.burst), ttlMs];
    try {
      const [taken, milli] = (await this.redis.evalsha(TAKE_TOKEN_SHA, 1, key, ...args).catch((err: Error) => {
        // A Redis restarted (or flushed) forgets its scripts: EVAL sends it again, and caches it.
        if (/^NOSCRIPT/.test(err.message)) return this.redis.eval(TAKE_TOKEN_LUA, 1, key, ...args);
        throw err;
      })) as [number, number];
      this.outage.worked();
      return { taken: taken === 1, tokens: milli / 1000 };
    } catch (err) {
      this.outage.failed(err);
      return null;
    }
  }
}
