import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@kernel/config';
import { CoreModule, DatabaseModule } from '@kernel/database';
import { LoggingModule } from '@kernel/logging';
import { MetricsModule } from '@kernel/metrics';
import { QueueModule, QueuesModule } from '@kernel/queue';
import { RedisModule } from '@kernel/redis';
import { TelemetryModule } from '@kernel/telemetry';
import { IdempotencyStoreModule } from '@web/idempotency';
import { DocumentsWorkerModule } from '@features/documents/worker';
import { ENTITIES } from '@features/entities';
import { ScimWorkerModule } from '@features/scim/worker';
import { WebhooksWorkerModule } from '@features/webhooks/worker';
import { HealthServer } from './health/health-server';
import { MaintenanceProcessor } from './maintenance.processor';
import { WorkerGauges } from './metrics/worker-gauges';
import { ScheduleKeeper } from './schedule-keeper';

/**
 * The worker's composition root (no routes): webhook delivery and the documents pipeline from
 * their features, the maintenance queue (expired idempotency keys, the 90-day delivery and
 * provisioning logs, the SCIM refusal warning), the
 * schedules, health and metrics.
 */
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
        QueuesModule,
        WebhooksWorkerModule,
        ScimWorkerModule,
        DocumentsWorkerModule.forRoot(),
        // The store only (its hourly sweep): the interceptor is the api's.
        IdempotencyStoreModule,
      ],
      providers: [MaintenanceProcessor, ScheduleKeeper, HealthServer, WorkerGauges],
    };
  }
}
