import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@kernel/database';
import { TranslationQueue } from './translation-queue';

export const INTAKE_BATCH_SIZE = 100;
/** The longest a pass holds its rows waiting for Redis; they are left for the next pass then. */
const ENQUEUE_TIMEOUT_MS = 10_000;

/**
 * Documents the api accepted (stored, `awaiting_queue`) → the translations queue, the way the
 * outbox relay moves events: the worker takes the oldest rows (FOR UPDATE SKIP LOCKED, so several
 * workers take disjoint rows), queues their jobs, and clears the flag in the same transaction.
 * If Redis does not take them the transaction rolls back and the rows wait for the next pass; a
 * job added twice (a pass whose commit was lost) is one job (same job id).
 */
@Injectable()
export class DocumentIntakeService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly queue: TranslationQueue,
  ) {}

  /** Queues up to `limit` waiting documents; returns how many rows it took. Throws, leaving them, when Redis did not take them. */
  async intakeBatch(limit = INTAKE_BATCH_SIZE): Promise<number> {
    return this.tx.run(async (m) => {
      const rows: Array<{ id: string; created_at: Date; state: string }> = await m.query(
        `SELECT id, created_at, state FROM documents WHERE awaiting_queue ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [limit],
      );
      if (rows.length === 0) return 0;
      // One already past `queued` (queued by the sweep meanwhile) only has its flag cleared.
      const queued = rows.filter((r) => r.state === 'queued').map((r) => ({ id: String(r.id), createdAt: r.created_at }));
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`Redis did not take the jobs within ${ENQUEUE_TIMEOUT_MS} ms`)), ENQUEUE_TIMEOUT_MS);
      });
      try {
        await Promise.race([this.queue.enqueueMany(queued), timeout]);
      } finally {
        clearTimeout(timer);
      }
      await m.query(`UPDATE documents SET awaiting_queue = false WHERE id = ANY ($1::bigint[])`, [rows.map((r) => String(r.id))]);
      return rows.length;
    });
  }

  reachable(): Promise<boolean> {
    return this.queue.reachable();
  }
}
