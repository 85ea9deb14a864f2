// First: starts tracing (when configured) before anything it instruments is loaded.
import './tracing';
import 'reflect-metadata';
import { AppConfig, startupFailureText } from '@kernel/config';
import { installGracefulShutdown } from '@kernel/logging';
import { Logger } from 'nestjs-pino';
import { createApiApp } from './bootstrap';

async function main(): Promise<void> {
  const config = AppConfig.fromEnv();
  const app = await createApiApp(config);
  const logger = app.get(Logger);
  installGracefulShutdown(app, logger, config.shutdownGraceMs, 'api');
  await app.listen(config.port, config.host);
  logger.log(`api listening on https://${config.host}:${config.port}`);
}

main().catch((err) => {
  process.stderr.write(`api failed to start: ${startupFailureText(err)}\n`);
  process.exit(1);
});
