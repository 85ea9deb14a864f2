import 'reflect-metadata';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { Logger } from 'nestjs-pino';
import { WebhooksWorkerModule } from '../../apps/worker/src/webhooks/webhooks-worker.module';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { WebhooksDomainModule, WebhookTls } from '../../libs/domain/src/webhooks';

/**
 * The real worker in process (WorkerModule and the webhook side), trusting the test receiver's
 * certificate. Until the lead wires WebhooksWorkerModule into WorkerModule, it is added here;
 * afterwards the same module is simply imported twice (Nest keeps one).
 */
export async function startWebhookWorker(config: AppConfig, ca?: string): Promise<INestApplicationContext> {
  @Module({ imports: [WorkerModule.forRoot(config), WebhooksDomainModule, WebhooksWorkerModule] })
  class TestWorkerModule {}
  const app = await NestFactory.createApplicationContext(TestWorkerModule, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  if (ca) app.get(WebhookTls).ca = ca;
  return app;
}
