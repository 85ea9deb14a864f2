import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Clock } from '@kernel/core';
import { PubSub, REDIS, RedisOutage } from '@kernel/redis';
import Redis from 'ioredis';

export const REFUSED_LIMIT = 60;
const CHANNEL = 'refused-key-block';

/**
 * The refused-key throttle: once 60 calls from one address were refused 401 within a clock
 * minute, every call from that address answers 429 until the next minute. Counts live in Redis
 * (shared by every replica); blocks are also mirrored in memory through pub/sub so that calls
 * with a valid key do not pay a Redis round trip to learn they are not blocked. An address this
 * replica itself refused in the current minute is asked about in Redis on each call for the rest
 * of that minute, so a block made on another replica applies here without waiting for pub/sub;
 * only an address this replica never refused relies on the message (about a millisecond).
 *
 * While Redis is unreachable the throttle degrades to "not counted": refusals answer 401 at once
 * and are not counted, blocks already known in memory still apply, and no call waits for Redis
 * (it is not asked while its connection is not ready). The outage is logged once, not per call.
 */
@Injectable()
export class RefusedKeyThrottle implements OnModuleInit {
  private readonly blocked = new Map<string, number>();
  /** Addresses refused by this replica, with the minute of the last refusal. */
  private readonly refusedHere = new Map<string, number>();
  private readonly outage: RedisOutage;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly pubSub: PubSub,
    private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.outage = new RedisOutage(redis, new Logger(RefusedKeyThrottle.name), 'refused keys are not counted', 'refused keys are counted again');
  }

  async onModuleInit(): Promise<void> {
    await this.pubSub.subscribe(
      CHANNEL,
      (m) => {
        const { ip, minute } = m as { ip: string; minute: number };
        this.blocked.set(ip, minute);
      },
      () => void this.reload(),
    );
    await this.reload();
  }

  /**
   * Whether `ip` is blocked this minute: from memory, synchronously, unless this replica refused
   * the address this minute (then one Redis lookup).
   */
  isBlocked(ip: string): boolean | Promise<boolean> {
    const minute = this.blocked.get(ip);
    const refused = this.refusedHere.get(ip);
    if (minute === undefined && refused === undefined) return false; // the common case: no clock read
    const now = this.minute();
    if (minute === now) return true;
    if (minute !== undefined) this.blocked.delete(ip);
    if (refused !== now) return false;
    if (!this.outage.mayTry()) return false; // not counted while Redis is away: no wait
    return this.redis.sismember(this.key(`blocked:${now}`), ip).then(
      (n) => {
        this.outage.worked();
        if (n === 1) this.blocked.set(ip, now);
        return n === 1;
      },
      (err) => {
        this.outage.failed(err);
        return false;
      },
    );
  }

  /**
   * Counts a 401 refusal; true when the address is now over the limit for this minute. Never
   * throws: with Redis unreachable the refusal is not counted (false).
   */
  async refuse(ip: string): Promise<boolean> {
    if (!this.outage.mayTry()) return false;
    try {
      const over = await this.count(ip);
      this.outage.worked();
      return over;
    } catch (err) {
      this.outage.failed(err);
      return false;
    }
  }

  private async count(ip: string): Promise<boolean> {
    const minute = this.minute();
    if (this.refusedHere.size > 50_000) this.refusedHere.clear();
    this.refusedHere.set(ip, minute);
    const key = this.key(`refused:${minute}:${ip}`);
    const res = await this.redis.multi().incr(key).expire(key, 120).exec();
    const count = Number(res?.[0]?.[1] ?? 0);
    if (count >= REFUSED_LIMIT) {
      this.blocked.set(ip, minute);
      if (count === REFUSED_LIMIT) {
        const set = this.key(`blocked:${minute}`);
        await this.redis.multi().sadd(set, ip).expire(set, 120).exec();
        await this.pubSub.publish(CHANNEL, { ip, minute });
      }
    }
    return count > REFUSED_LIMIT;
  }

  /** Seconds until the next clock minute. */
  retryAfterSeconds(): number {
    return Math.max(1, 60 - Math.floor((this.clock.now().getTime() % 60_000) / 1000));
  }

  private async reload(): Promise<void> {
    const minute = this.minute();
    const ips = await this.redis.smembers(this.key(`blocked:${minute}`)).catch(() => [] as string[]);
    ips.forEach((ip) => this.blocked.set(ip, minute));
  }

  private minute(): number {
    return Math.floor(this.clock.now().getTime() / 60_000);
  }

  private key(suffix: string): string {
    return `${this.config.redisPrefix}:throttle:${suffix}`;
  }
}
