import 'reflect-metadata';
import { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { WebhookTls } from '@app/domain';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from '../../apps/worker/src/worker.module';

/** The real worker in process, trusting the test receiver's certificate. */
export async function startWebhookWorker(config: AppConfig, ca?: string): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  app.useLogger(app.get(Logger));
  if (ca) app.get(WebhookTls).ca = ca;
  return app;
}
