import { Injectable } from '@nestjs/common';
import { Clock, TransactionHost } from '@app/core';

export interface OverdueDelivery {
  id: string;
  /** Attempts made in its series: 0 belongs on the first-attempt queue, more on the retry queue. */
  attempts: number;
}

/**
 * The safety net under the queue: pending deliveries whose attempt is overdue. Their job was lost (a crash between commit and enqueue, a job that stalled too
 * often, a flushed Redis); the worker queues them again under the same job id, which is a no-op
 * when the job is in fact still there.
 */
@Injectable()
export class DeliveryRecoveryService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  async overdue(graceMs: number, limit = 1000): Promise<OverdueDelivery[]> {
    const now = this.clock.now();
    const rows: Array<{ id: string; attempts: number }> = await this.tx.manager.query(
      `SELECT id, attempts FROM webhook_deliveries
        WHERE state IN ('queued', 'waiting') AND next_attempt_at <= $1
        ORDER BY next_attempt_at LIMIT $2`,
      [new Date(now.getTime() - graceMs).toISOString(), limit],
    );
    return rows.map((r) => ({ id: r.id.trim(), attempts: r.attempts }));
  }
}
