// First: starts tracing (when configured) before anything it instruments is loaded.
import './tracing';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppConfig, startupFailureText } from '@kernel/config';
import { holdStopSignals, installGracefulShutdown } from '@kernel/logging';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module';

async function main(): Promise<void> {
  // The health server answers ready during init, before the shutdown below is installed.
  const replayStopSignals = holdStopSignals();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(), { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  installGracefulShutdown(app, logger, app.get(AppConfig).shutdownGraceMs, 'worker');
  replayStopSignals();
  logger.log('worker started');
}

main().catch((err) => {
  process.stderr.write(`worker failed to start: ${startupFailureText(err)}\n`);
  process.exit(1);
});
