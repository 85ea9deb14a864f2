import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { LoggerModule } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';

/** Fields that may hold keys or secrets, wherever they appear in a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  '*.authorization',
  '*.key',
  '*.secret',
  '*.password',
  'key',
  'secret',
];

/**
 * JSON logs through pino, one line per request with the request id. Requests are logged as
 * method + path only: headers (Authorization) and query strings never reach a log.
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
            pinoHttp: {
              level: config.logLevel,
              // Request lines are logged at info; above that level don't build them at all.
              autoLogging: ['trace', 'debug', 'info'].includes(config.logLevel),
              base: { app },
              redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
              genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id?: string }).id ?? 'none',
              serializers: {
                req: (req: { id?: string; method?: string; url?: string }) => ({
                  id: req.id,
                  method: req.method,
                  path: (req.url ?? '').split('?')[0],
                }),
                res: (res: { statusCode?: number }) => ({ status: res.statusCode }),
              },
              customLogLevel: (_req: unknown, res: { statusCode: number }, err?: Error) =>
                err || res.statusCode >= 500 ? 'error' : 'info',
            },
          }),
        }),
      ],
    };
  }
}
