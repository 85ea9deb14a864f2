import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import type { ConnectionOptions } from 'bullmq';
import { QUEUES } from './queues';

/** BullMQ's connection settings for REDIS_URL (workers need `maxRetriesPerRequest: null`). */
export function bullConnection(redisUrl: string): ConnectionOptions {
  return { url: redisUrl, maxRetriesPerRequest: null };
}

/** BullMQ on the shared Redis, every queue under the configured prefix. */
@Module({})
export class QueueModule {
  static forRoot(): DynamicModule {
    return {
      module: QueueModule,
      imports: [
        BullModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({ connection: bullConnection(config.redisUrl), prefix: `${config.redisPrefix}:bull` }),
        }),
        BullModule.registerQueue(...Object.values(QUEUES).map((name) => ({ name }))),
      ],
      exports: [BullModule],
    };
  }
}
