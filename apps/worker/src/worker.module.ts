import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { CoreModule } from '@app/core';
import { DomainModule, ENTITIES } from '@app/domain';
import { IdempotencyStoreModule } from '@app/idempotency';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { TelemetryModule } from '@app/telemetry';
import { QueueModule, QueuesModule } from '@app/queue';
import { RedisModule } from '@app/redis';
import { DocumentsWorkerModule } from './documents/documents-worker.module';
import { HealthServer } from './health/health-server';
import { WorkerGauges } from './metrics/worker-gauges';
import { LegacyQueueMover } from './legacy-queues';
import { MaintenanceProcessor } from './processors/maintenance.processor';
import { ScheduleKeeper } from './schedule-keeper';
import { WebhooksWorkerModule } from './webhooks/webhooks-worker.module';

@Module({})
export class WorkerModule {
  /** `config` replaces reading the environment (tests). */
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('worker'),
        MetricsModule,
        TelemetryModule,
        // The worker never migrates: that is the migrate step's (or the api's) job.
        DatabaseModule.forRoot('worker', { entities: ENTITIES }),
        RedisModule,
        QueueModule.forRoot(),
        CoreModule,
        // Not used by the worker's own providers: its context keeps the domain services as before (its specs seed data through them).
        DomainModule,
        QueuesModule,
        WebhooksWorkerModule,
        DocumentsWorkerModule.forRoot(),
        // The store only (its hourly sweep): the interceptor is the api's.
        IdempotencyStoreModule,
      ],
      providers: [MaintenanceProcessor, ScheduleKeeper, HealthServer, WorkerGauges, LegacyQueueMover],
    };
  }
}
