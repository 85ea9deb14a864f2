import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { REDIS, RedisOutage } from '@kernel/redis';
import type Redis from 'ioredis';
import { createHash } from 'node:crypto';

/** Sign-in mails: at most this many per address… */
export const MAILS_PER_ADDRESS = 5;
/** …and this many asked from one client address… */
export const MAILS_PER_CLIENT = 20;
/** …in this window. */
export const MAIL_WINDOW_SECONDS = 15 * 60;

/**
 * Counts sign-in mails per address (hashed: no address is stored in Redis) and per client
 * address, in fixed windows in Redis so every api replica counts together. During a Redis
 * outage nothing is counted (logged once), as for the refused-key throttle: sign-in keeps working.
 */
@Injectable()
export class SignInThrottle {
  private readonly outage: RedisOutage;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {
    this.outage = new RedisOutage(
      redis,
      new Logger(SignInThrottle.name),
      'console sign-in mails are not throttled',
      'console sign-in mails are throttled again',
    );
  }

  /** Counts one ask; the seconds to wait when over either limit, else 0. */
  async take(email: string, clientIp: string): Promise<number> {
    if (!this.outage.mayTry()) return 0;
    const addressKey = `${this.config.redisPrefix}:console:signin:address:${createHash('sha256').update(email.toLowerCase()).digest('hex')}`;
    const clientKey = `${this.config.redisPrefix}:console:signin:client:${clientIp}`;
    try {
      // One transaction per key (never one spanning both), so this also works on a Redis Cluster.
      const count = async (key: string): Promise<[number, number]> => {
        const r = await this.redis.multi().incr(key).expire(key, MAIL_WINDOW_SECONDS, 'NX').ttl(key).exec();
        return [Number(r?.[0]?.[1] ?? 0), Number(r?.[2]?.[1] ?? 0)];
      };
      const [[byAddress, addressTtl], [byClient, clientTtl]] = await Promise.all([count(addressKey), count(clientKey)]);
      this.outage.worked();
      const waits = [byAddress > MAILS_PER_ADDRESS ? addressTtl : 0, byClient > MAILS_PER_CLIENT ? clientTtl : 0];
      return Math.max(0, ...waits);
    } catch (err) {
      this.outage.failed(err);
      return 0;
    }
  }
}
