import { Injectable, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CoreModule, TransactionHost } from '@app/core';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';

/**
 * The workers' hot statements (a batch of delivery reads, of records, of document claims and
 * stores, the outbox relay): each a named prepared statement, so Postgres parses and plans it
 * once per server connection instead of at every batch (parsing and planning took as long as
 * running them: issue 15). Behind a transaction-mode pooler (DATABASE_PREPARED_STATEMENTS, `auto`
 * unless DATABASE_URL is the direct connection) they go unnamed, since the next Bind could reach
 * a server connection that never saw the Parse. In the caller's transaction they run in it, unnamed.
 */
@Injectable()
export class PreparedStatements {
  private readonly pool: Pool;

  constructor(
    private readonly tx: TransactionHost,
    private readonly config: AppConfig,
    dataSource: DataSource,
  ) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  /** `name` must always come with the same `text` (pg refuses a name reused for another). */
  async query<T = Record<string, unknown>>(name: string, text: string, values: unknown[]): Promise<T[]> {
    if (this.tx.inTransaction) {
      // The rows, whatever the statement (EntityManager.query answers [rows, count] for an UPDATE).
      const runner = this.tx.manager.queryRunner;
      if (!runner) throw new Error('a transaction without its query runner');
      return (await runner.query(text, values, true)).records as T[];
    }
    const statement = this.config.databasePreparedStatements ? { name, text, values } : { text, values };
    return (await this.pool.query(statement)).rows as T[];
  }
}

@Module({ imports: [CoreModule], providers: [PreparedStatements], exports: [PreparedStatements] })
export class PreparedStatementsModule {}
