import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig, ConfigModule } from '@kernel/config';
import { CoreModule, DatabaseModule } from '@kernel/database';
import { LoggingModule } from '@kernel/logging';
import { ENTITIES } from '@features/entities';
import { ScimWorkerModule } from '@features/scim/worker';
import { Logger } from 'nestjs-pino';

/**
 * The worker's SCIM maintenance jobs without the rest of the worker: no BullMQ, so no scheduled
 * run of the same job races the one a spec makes (the worker composes ScimWorkerModule as is).
 */
export async function startScimJobs(config: AppConfig): Promise<INestApplicationContext> {
  @Module({
    imports: [
      ConfigModule.forRoot(config),
      LoggingModule.forRoot('worker'),
      DatabaseModule.forRoot('worker', { entities: ENTITIES }),
      CoreModule,
      ScimWorkerModule,
    ],
  })
  class ScimJobsModule {}
  const app = await NestFactory.createApplicationContext(ScimJobsModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  return app;
}
