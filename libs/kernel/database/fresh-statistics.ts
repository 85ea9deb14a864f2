import { Injectable, Logger, Module } from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { CoreModule } from './core.module';

/** Tables are analysed once this share of their rows changed since the last analysis… */
export const STALE_SHARE = 0.01;
/** …and at least this many (the per-table autovacuum settings of migration ScimPagingStatistics say the same). */
export const STALE_ROWS = 1000;
/** Each process looks at a set of tables at most this often. */
export const STATISTICS_CHECK_MS = 2_000;
/** The advisory lock (transaction-scoped) under which one process at a time analyses. */
const ANALYSE_LOCK = 7_264_260_001;

/**
 * Planner statistics kept current for queries whose plan goes wrong without them. Right after a
 * bulk load (an identity provider pushing thousands of users) autovacuum has not analysed the
 * tables yet: it looks at each database once a minute (`autovacuum_naptime`) and may be busy
 * elsewhere, and until then Postgres plans the SCIM list's joins for the table it last saw (a
 * plan that can make one page many times slower). Before such a query a caller asks
 * `ensure(tables)`: at most every STATISTICS_CHECK_MS per process it reads how many rows of each
 * changed since its last analysis (pg_stat_user_tables), and when one is past the autovacuum
 * threshold the migrations set, analyses the stale ones then and there, under a transaction-scoped
 * advisory lock so that replicas do not analyse together (one that finds the lock taken goes on
 * without waiting; a transaction-mode pooler keeps the lock and ANALYZE on one connection). An
 * analysis samples at most 30,000 rows a table (default_statistics_target), so it costs the same
 * on any size. Failures are logged and never fail the caller's query.
 */
@Injectable()
export class FreshStatistics {
  private readonly pool: Pool;
  private readonly checked = new Map<string, number>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly logger = new Logger(FreshStatistics.name);

  constructor(dataSource: DataSource) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  /** Resolves once `tables` (names of this schema's tables) have current statistics, or a check is not due. */
  ensure(tables: readonly string[]): Promise<void> {
    const key = tables.join(',');
    const inFlight = this.running.get(key);
    if (inFlight) return inFlight;
    const now = Date.now();
    if (now - (this.checked.get(key) ?? 0) < STATISTICS_CHECK_MS) return Promise.resolve();
    this.checked.set(key, now);
    const run = this.check(tables)
      .catch((err: Error) => this.logger.warn(`could not refresh the statistics of ${key}: ${err.message}`))
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
    return run;
  }

  private async check(tables: readonly string[]): Promise<void> {
    const { rows } = await this.pool.query<{ relname: string }>(
      `SELECT relname FROM pg_stat_user_tables
        WHERE schemaname = current_schema() AND relname = ANY($1::text[])
          AND n_mod_since_analyze > greatest($2::float8 * greatest(n_live_tup, 0), $3::float8)`,
      [tables, STALE_SHARE, STALE_ROWS],
    );
    if (rows.length === 0) return;
    const stale = rows.map((r) => `"${r.relname.replace(/"/g, '""')}"`).join(', ');
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const [{ locked }] = (await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock($1) AS locked`, [ANALYSE_LOCK])).rows;
      if (locked) await client.query(`ANALYZE ${stale}`);
      await client.query('COMMIT');
      if (locked) this.logger.log(`analysed ${stale}: their statistics were older than ${STALE_SHARE * 100}% of their rows`);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

@Module({ imports: [CoreModule], providers: [FreshStatistics], exports: [FreshStatistics] })
export class FreshStatisticsModule {}
