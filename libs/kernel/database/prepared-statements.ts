import { Injectable, Module } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { CoreModule } from './core.module';
import { TransactionHost } from './transaction-host';
import type { Pool, PoolClient } from 'pg';
import { DataSource, EntityManager } from 'typeorm';

/**
 * Hot statements (a batch of delivery reads, of records, of document claims and stores, the outbox
 * relay; a SCIM create's checks and its read back): each a named prepared statement, so Postgres
 * parses it once per server connection and, once its plan settles, plans it no more (parsing and
 * planning can cost as much as running them). Behind a transaction-mode pooler
 * (DATABASE_PREPARED_STATEMENTS, `auto` unless DATABASE_URL is the direct connection) they go
 * unnamed, since the next Bind could reach a server connection that never saw the Parse. In the
 * caller's transaction they run on its connection: named there too when prepared statements are on
 * (a statement prepared is the session's, whatever becomes of the transaction).
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

  /**
   * In the current transaction (TransactionHost) if there is one, else on the pool. `name` must
   * always come with the same `text` (pg refuses a name reused for another).
   */
  query<T = Record<string, unknown>>(name: string, text: string, values: unknown[]): Promise<T[]> {
    return this.queryIn(this.tx.inTransaction ? this.tx.manager : undefined, name, text, values);
  }

  /** On `manager`'s transaction when it has one (a manager handed to a repository), else on the pool; rows, whatever the statement. */
  async queryIn<T = Record<string, unknown>>(manager: EntityManager | undefined, name: string, text: string, values: unknown[]): Promise<T[]> {
    const prepared = this.config.databasePreparedStatements;
    const runner = manager?.queryRunner;
    if (runner) {
      if (prepared) {
        // The transaction's own connection (pg's client), so the statement runs in the transaction.
        const client = await (runner as unknown as { connect(): Promise<PoolClient> }).connect();
        return (await client.query({ name, text, values })).rows as T[];
      }
      // TypeORM's EntityManager.query answers [rows, count] for an UPDATE: the rows, whatever the statement.
      return (await runner.query(text, values, true)).records as T[];
    }
    const statement = prepared ? { name, text, values } : { text, values };
    return (await this.pool.query(statement)).rows as T[];
  }
}

@Module({ imports: [CoreModule], providers: [PreparedStatements], exports: [PreparedStatements] })
export class PreparedStatementsModule {}
