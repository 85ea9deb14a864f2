import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';

/**
 * TypeORM's messages through Nest's logger (pino in the apps: JSON, redacted) instead of
 * console.log, which would also pollute the admin CLI's stdout. Query parameters are never
 * logged: they can hold keys' hashes, addresses and tokens.
 */
export class NestTypeOrmLogger implements TypeOrmLogger {
  private readonly logger = new Logger('TypeORM');

  logQuery(): void {}

  logQueryError(error: string | Error, query: string): void {
    this.logger.error(`query failed: ${error instanceof Error ? error.message : error} — ${query.replace(/\s+/g, ' ').slice(0, 500)}`);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query (${time} ms): ${query.replace(/\s+/g, ' ').slice(0, 500)}`);
  }

  // Migration progress is reported by whoever runs them (the CLI prints what it applied).
  logSchemaBuild(): void {}

  logMigration(): void {}

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
  }
}
