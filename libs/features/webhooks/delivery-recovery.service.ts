import { Injectable } from '@nestjs/common';
import { Clock } from '@kernel/core';
import { TransactionHost } from '@kernel/database';

export interface OverdueDelivery {
  id: string;
  /** Attempts made in its series: 0 belongs on the first-attempt queue, more on the retry queue. */
  attempts: number;
  webhookId: string;
  /** Where the next page starts (keyset: the delivery's time, then its id). */
  nextAttemptAt: Date;
}

/**
 * The safety net under the queue: pending deliveries whose attempt is overdue. Their job was lost (a crash between commit and enqueue, a job that stalled too
 * often, a flushed Redis); the worker queues them again under the same job id, which is a no-op
 * when the job is in fact still there. Deliveries parked behind their webhook's cap on attempts in
 * flight are overdue too; the worker skips those it finds parked (see its WebhookSlots).
 */
@Injectable()
export class DeliveryRecoveryService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** Oldest first, `limit` at a time; `after` (the last row of the previous page) pages on. */
  async overdue(graceMs: number, limit = 1000, after?: { nextAttemptAt: Date; id: string }): Promise<OverdueDelivery[]> {
    const now = this.clock.now();
    const rows: Array<{ id: string; attempts: number; webhook_id: string; next_attempt_at: Date }> = await this.tx.manager.query(
      `SELECT id, attempts, webhook_id, next_attempt_at FROM webhook_deliveries
        WHERE state IN ('queued', 'waiting') AND next_attempt_at <= $1
          AND ($3::timestamptz IS NULL OR (next_attempt_at, id) > ($3::timestamptz, $4::char(32)))
        ORDER BY next_attempt_at, id LIMIT $2`,
      [new Date(now.getTime() - graceMs).toISOString(), limit, after?.nextAttemptAt.toISOString() ?? null, after?.id ?? null],
    );
    return rows.map((r) => ({ id: r.id.trim(), attempts: r.attempts, webhookId: String(r.webhook_id), nextAttemptAt: new Date(r.next_attempt_at) }));
  }
}
