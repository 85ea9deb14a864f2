import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@kernel/database';
import { randomUUID } from 'node:crypto';
import { EntityManager } from 'typeorm';

export interface StoredResponse {
  fingerprint: string;
  statusCode: number;
  body: unknown;
}

export interface IdempotentRequest {
  method: string;
  path: string;
  fingerprint: string;
}

/** What claiming a key found: it is ours now, another request holds it, or its answer is stored. */
export type Claim = { kind: 'claimed'; token: string } | { kind: 'in_progress' } | { kind: 'done'; stored: StoredResponse };

/**
 * Postgres store of Idempotency-Key claims and answers. Needs no HTTP: the worker uses it for its
 * sweep. A key is claimed by a row without an answer (`status_code` null) whose `expires_at` is
 * a lease: a request that crashed (or lost Postgres) holding it frees the key when the lease ends,
 * and the sweep deletes it like an expired answer.
 */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly tx: TransactionHost) {}

  /** One autocommitted statement: concurrent claims of one key meet on its primary key, one wins. */
  async claim(connectionId: string, key: string, request: IdempotentRequest, leaseSeconds: number): Promise<Claim> {
    const token = randomUUID();
    const claimed: unknown[] = await this.tx.manager.query(
      `INSERT INTO idempotency_keys
         (connection_id, idempotency_key, method, path, fingerprint, status_code, response_body, claim_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, NULL, NULL, $6, now() + make_interval(secs => $7))
       ON CONFLICT (connection_id, idempotency_key) DO UPDATE SET
         method = EXCLUDED.method, path = EXCLUDED.path, fingerprint = EXCLUDED.fingerprint, status_code = NULL,
         response_body = NULL, claim_token = EXCLUDED.claim_token, created_at = now(), expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= now()
       RETURNING 1`,
      [connectionId, key, request.method, request.path, request.fingerprint, token, leaseSeconds],
    );
    if (claimed.length > 0) return { kind: 'claimed', token };
    const rows: Array<{ fingerprint: string; status_code: number | null; response_body: unknown }> = await this.tx.manager.query(
      `SELECT fingerprint, status_code, response_body FROM idempotency_keys
        WHERE connection_id = $1 AND idempotency_key = $2 AND expires_at > now()`,
      [connectionId, key],
    );
    const r = rows[0];
    // No row: it expired between the two statements; the caller retries like any key in use.
    if (!r || r.status_code === null) return { kind: 'in_progress' };
    return { kind: 'done', stored: { fingerprint: r.fingerprint, statusCode: r.status_code, body: r.response_body } };
  }

  /**
   * Stores the answer in the claim, through `m` (the transaction of the effect). False when the
   * claim is no longer this request's (its lease ended and another request took the key).
   */
  async finish(
    m: EntityManager,
    connectionId: string,
    key: string,
    token: string,
    response: { statusCode: number; body: unknown },
    ttlHours: number,
  ): Promise<boolean> {
    // A CTE: TypeORM answers a bare UPDATE with [rows, rowCount], whatever it touched.
    const [row] = await m.query(
      `WITH stored AS (
         UPDATE idempotency_keys SET status_code = $4, response_body = $5, claim_token = NULL,
                created_at = now(), expires_at = now() + make_interval(hours => $6)
          WHERE connection_id = $1 AND idempotency_key = $2 AND claim_token = $3
         RETURNING 1)
       SELECT count(*)::int AS n FROM stored`,
      [connectionId, key, token, response.statusCode, response.body === undefined ? null : JSON.stringify(response.body), ttlHours],
    );
    return row.n > 0;
  }

  /** Frees a key whose request failed (errors are not stored), if the claim is still this request's. */
  async release(connectionId: string, key: string, token: string): Promise<void> {
    await this.tx.manager.query(`DELETE FROM idempotency_keys WHERE connection_id = $1 AND idempotency_key = $2 AND claim_token = $3`, [
      connectionId,
      key,
      token,
    ]);
  }

  /** Deletes up to `batch` expired records (answers and abandoned claims); returns how many. Safe to run on several workers. */
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
