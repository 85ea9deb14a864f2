import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Injectable, Module, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { AppConfig, RedisSettings } from '@kernel/config';
import { redisConnectionOptions, redisFromOptions } from '@kernel/redis';
import type { RedisOptions } from 'ioredis';
import { ConnectionOptions, createIORedisClient, Queue, RedisConnection } from 'bullmq';
import { isTracing } from '@kernel/telemetry';
import { BullMQOtel } from 'bullmq-otel';
import { logBullErrors } from './bull-errors';
import { QUEUES } from './queues';

/**
 * BullMQ's connection settings for the configured Redis (TLS, ACL user, Sentinel: the one factory,
 * libs/redis), workers needing `maxRetriesPerRequest: null`. Reconnects every 1 to 2 s: BullMQ's
 * own backoff grows to 20 s, so queues and workers resumed up to 20 s after Redis was back.
 */
export function bullConnection(settings: RedisSettings): ConnectionOptions {
  // ioredis's own options; BullMQ's type declares them loosely (`port?: number` vs ioredis's `number | undefined`).
  return redisConnectionOptions(settings, {
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(Math.max(times * 500, 1000), 2000),
  }) as ConnectionOptions;
}

// BullMQ's connections (queues, workers, their blocking duplicates) are made by libs/redis too, from
// the options bullConnection gave (BullMQ's documented hook; one per process, so set once here).
RedisConnection.clientFactory ??= (options) => createIORedisClient(redisFromOptions(options as RedisOptions));

/**
 * BullMQ's key prefix: REDIS_PREFIX as a Redis Cluster hash tag (`{ia}:bull`), so every key of every
 * queue hashes to one slot and BullMQ's multi-key scripts work on a cluster (an unbraced prefix is
 * refused there: docs/operations/scale.md, "Redis: TLS, ACL, Sentinel, Cluster").
 */
export function bullPrefix(redisPrefix: string): string {
  return `{${redisPrefix}}:bull`;
}

/** Listens to the errors of every queue instance the application made, whichever module registered it (see logBullErrors). */
@Injectable()
class QueueErrorLog implements OnApplicationBootstrap {
  constructor(private readonly discovery: DiscoveryService) {}
  onApplicationBootstrap(): void {
    const queues = new Set(
      this.discovery
        .getProviders()
        .map((p) => p.instance)
        .filter((i): i is Queue => i instanceof Queue),
    );
    for (const queue of queues) logBullErrors(queue, `Queue ${queue.name}`);
  }
}

/** The longest a queue call of a producer-only process (the api) waits for Redis. */
export const PRODUCER_COMMAND_TIMEOUT_MS = 2000;

/**
 * Every queue of the catalogue (QUEUES), registered in this one place: one Queue instance per name
 * and process. A module that produces or processes jobs imports it; it needs QueueModule's root.
 */
@Module({ imports: [BullModule.registerQueue(...Object.values(QUEUES).map((name) => ({ name })))], exports: [BullModule] })
export class QueuesModule {}

/** BullMQ on the shared Redis (the root connection, once per application), every queue under the configured prefix. */
@Module({})
export class QueueModule {
  /**
   * `producerOnly` (the api: it runs no workers) makes queue calls fail within
   * PRODUCER_COMMAND_TIMEOUT_MS while Redis is away, instead of waiting for it as workers must.
   */
  static forRoot(options: { producerOnly?: boolean } = {}): DynamicModule {
    const failFast = options.producerOnly ? { maxRetriesPerRequest: 1, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS } : {};
    return {
      module: QueueModule,
      imports: [
        DiscoveryModule,
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            connection: { ...bullConnection(config.redis), ...failFast },
            prefix: bullPrefix(config.redisPrefix),
            // Tracing on: producer spans for adds (the trace context goes into the job's options) and a
            // consumer span per processed job, a child of the context its job carries. Off: none of it.
            ...(isTracing() ? { telemetry: new BullMQOtel({ tracerName: 'bullmq' }) } : {}),
          }),
        }),
      ],
      providers: [QueueErrorLog],
    };
  }
}
