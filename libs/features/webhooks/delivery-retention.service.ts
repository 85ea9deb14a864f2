import { Injectable } from '@nestjs/common';
import { Clock } from '@kernel/core';
import { TransactionHost } from '@kernel/database';

/** Delivered, failed and given-up deliveries are kept this long after they finished. */
export const DELIVERY_RETENTION_DAYS = 90;
export const RETENTION_BATCH_SIZE = 1000;

/**
 * The 90-day sweep. Each batch is one short statement (its attempts go with it by cascade),
 * so no lock is held for long; SKIP LOCKED lets two sweeps run at once without waiting on or
 * double-counting each other. Removed webhooks go too once none of their deliveries is left, and
 * so do outbox rows relayed before the cutoff.
 */
@Injectable()
export class DeliveryRetentionService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** Batch after batch until a short one, or until `stop()` says so; returns the deliveries deleted. */
  async sweep(batchSize = RETENTION_BATCH_SIZE, stop: () => boolean = () => false): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - DELIVERY_RETENTION_DAYS * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const [{ n }] = await this.tx.manager.query(
        `WITH doomed AS (
           SELECT id FROM webhook_deliveries
            WHERE state IN ('delivered', 'failed', 'given_up') AND finished_at < $1
            ORDER BY finished_at LIMIT $2 FOR UPDATE SKIP LOCKED
         ), gone AS (
           DELETE FROM webhook_deliveries d USING doomed WHERE d.id = doomed.id RETURNING 1
         )
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, batchSize],
      );
      total += n as number;
      if (n < batchSize || stop()) break;
    }
    // Outbox rows have done their work once relayed; they go on the same schedule.
    for (;;) {
      const [{ n }] = await this.tx.manager.query(
        `WITH gone AS (
           DELETE FROM outbox_events WHERE id IN (
             SELECT id FROM outbox_events WHERE relayed_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, batchSize],
      );
      if (n < batchSize || stop()) break;
    }
    await this.tx.manager.query(
      `DELETE FROM webhooks w WHERE w.id IN (
         SELECT id FROM webhooks WHERE deleted_at < $1 AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = webhooks.id)
          LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff, batchSize],
    );
    return total;
  }
}
