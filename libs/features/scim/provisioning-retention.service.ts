import { Injectable } from '@nestjs/common';
import { Clock } from '@kernel/core';
import { TransactionHost } from '@kernel/database';

/** Provisioning log rows are kept this long. */
export const PROVISIONING_RETENTION_DAYS = 90;
export const PROVISIONING_SWEEP_BATCH = 1000;

/**
 * The provisioning log's 90-day sweep, as the delivery log's: each batch one short statement (the
 * time's BRIN index finds the old rows), SKIP LOCKED so two sweeps never wait on each other, and a
 * stop between batches on shutdown (the next run takes the rest).
 */
@Injectable()
export class ProvisioningRetentionService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
  ) {}

  /** Batch after batch until a short one, or until `stop()` says so; returns the rows deleted. */
  async sweep(batchSize = PROVISIONING_SWEEP_BATCH, stop: () => boolean = () => false): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - PROVISIONING_RETENTION_DAYS * 86_400_000).toISOString();
    let total = 0;
    for (;;) {
      const [{ n }] = await this.tx.manager.query(
        `WITH gone AS (
           DELETE FROM provisioning_events WHERE id IN (
             SELECT id FROM provisioning_events WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)
           RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [cutoff, batchSize],
      );
      total += n as number;
      if (n < batchSize || stop()) return total;
    }
  }
}
