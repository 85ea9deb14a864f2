import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { LoggerModule } from 'nestjs-pino';
import type { LogFn, Logger, LoggerOptions } from 'pino';
import { batchedLogDestination } from './log-destination';

/** Fields that may hold keys or secrets, wherever they appear in a log line. */
export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', '*.authorization', '*.key', '*.secret', '*.password', 'key', 'secret'];

/** Nest's start-up detail (one line per module and per route, 128 of them): debug, not info. */
const STARTUP_DETAIL = new Set(['RoutesResolver', 'RouterExplorer', 'InstanceLoader']);

/** pino's logMethod hook: what Nest logs at info under those contexts is written at debug. */
function startupDetailAtDebug(this: Logger, args: Parameters<LogFn>, method: LogFn, level: number): void {
  const context = (args[0] as { context?: unknown } | null)?.context;
  if (level === 30 && typeof context === 'string' && STARTUP_DETAIL.has(context)) {
    if (this.isLevelEnabled('debug')) this.debug(...args);
    return;
  }
  method.apply(this, args);
}

/** The processes' pino options (also what request-log.spec.ts holds the hand-built request line against). */
export function pinoOptions(app: string, level: string): LoggerOptions {
  return {
    level,
    base: { app },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    hooks: { logMethod: startupDetailAtDebug },
  };
}

/**
 * JSON logs through pino (nestjs-pino is the application logger). Request lines are written by
 * {@link requestLog} (called by the api's front door), not by nestjs-pino's per-request middleware: that one runs every
 * request inside an AsyncLocalStorage context, which on Node 20 turns on promise hooks for every
 * promise and cost about a third of the api's throughput (bench/me.bench.js). Its middleware is
 * bound to no route at all (`forRoutes: []`), so it adds no layer to express's router. Errors
 * logged during a request carry the request id explicitly. Lines go to stdout through
 * batchedLogDestination: written together once per turn of the event loop, synchronously, and
 * flushed on exit (see there).
 */
@Module({})
export class LoggingModule {
  static forRoot(app: string): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            forRoutes: [],
            pinoHttp: [pinoOptions(app, config.logLevel), batchedLogDestination()],
          }),
        }),
      ],
    };
  }
}
