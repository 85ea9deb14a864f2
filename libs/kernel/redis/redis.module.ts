import { Inject, Injectable, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import Redis from 'ioredis';
import { PubSub } from './pub-sub';
import { createRedis } from './redis-connection';
import { REDIS } from './redis.tokens';

/** The longest a command on the shared connection may wait for Redis. */
export const REDIS_COMMAND_TIMEOUT_MS = 2000;

/** Closes the shared connection last, after everything that uses it. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** One command connection per process (plus one subscriber, made on first subscribe): a static module, so every importer shares it. */
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [AppConfig],
      useFactory: (config: AppConfig) => {
        // A command waits at most COMMAND_TIMEOUT_MS (also in the offline queue while reconnecting),
        // so no call hangs for a Redis outage; callers that can do without Redis check `status` first.
        // Auto-pipelining: the commands issued in one tick of the event loop leave in one write (one
        // syscall, one TLS record) instead of one each. Every keyed api call takes a rate-limit token
        // (one EVALSHA); under load many calls take theirs in the same tick, and writing each one
        // alone costs a syscall per call (`bench/me.bench.js` measures it). Order and answers are
        // unchanged; no blocking command runs on this connection (BullMQ has its own).
        const redis = createRedis(config.redis, {
          enableAutoPipelining: true,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: true,
          commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
          connectionName: 'integrations',
        });
        const logger = new Logger('Redis');
        redis.on('error', (err: Error) => logger.warn(`redis: ${err.message}`));
        return redis;
      },
    },
    PubSub,
    RedisCloser,
  ],
  exports: [REDIS, PubSub],
})
export class RedisModule {}
