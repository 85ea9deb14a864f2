import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@app/core';

export interface StoredResponse {
  fingerprint: string;
  statusCode: number;
  body: unknown;
}

/** Postgres store of Idempotency-Key results; every call joins the current transaction. */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly tx: TransactionHost) {}

  /**
   * Marks the key "in progress" for the life of the current transaction. A transaction-scoped
   * advisory lock is released by commit, rollback or a dropped connection: a crash cannot leave
   * a key stuck in progress.
   */
  async tryLock(connectionId: string, key: string): Promise<boolean> {
    const [row] = await this.tx.manager.query(`SELECT pg_try_advisory_xact_lock(hashtextextended($1, 7)) AS ok`, [
      `idem:${connectionId}:${key}`,
    ]);
    return Boolean(row?.ok);
  }

  async find(connectionId: string, key: string): Promise<StoredResponse | null> {
    const rows: Array<{ fingerprint: string; status_code: number; response_body: unknown }> = await this.tx.manager.query(
      `SELECT fingerprint, status_code, response_body FROM idempotency_keys
        WHERE connection_id = $1 AND idempotency_key = $2 AND expires_at > now()`,
      [connectionId, key],
    );
    const r = rows[0];
    return r ? { fingerprint: r.fingerprint, statusCode: r.status_code, body: r.response_body } : null;
  }

  async save(
    connectionId: string,
    key: string,
    request: { method: string; path: string; fingerprint: string },
    response: { statusCode: number; body: unknown },
    ttlHours: number,
  ): Promise<void> {
    await this.tx.manager.query(
      `INSERT INTO idempotency_keys
         (connection_id, idempotency_key, method, path, fingerprint, status_code, response_body, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8))
       ON CONFLICT (connection_id, idempotency_key) DO UPDATE SET
         method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint,
         status_code = EXCLUDED.status_code, response_body = EXCLUDED.response_body,
         created_at = now(), expires_at = EXCLUDED.expires_at`,
      [connectionId, key, request.method, request.path, request.fingerprint, response.statusCode,
        response.body === undefined ? null : JSON.stringify(response.body), ttlHours],
    );
  }

  /** Deletes up to `batch` expired records; returns how many. Safe to run on several workers. */
  async sweepExpired(batch = 1000): Promise<number> {
    const [row] = await this.tx.manager.query(
      `WITH gone AS (
         DELETE FROM idempotency_keys WHERE ctid IN (
           SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [batch],
    );
    return row.n as number;
  }
}
