import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { DELIVERY_JOB_OPTIONS, DeliveryJob, FIRST_ATTEMPT_JOB_ATTEMPTS, QUEUES, RETRY_JOB_ATTEMPTS, WEBHOOK_JOBS } from '@app/queue';
import { BackoffStrategy, Queue } from 'bullmq';
/** When a job fails for another reason (the database away, a bug), it is tried again after this long. */
const UNEXPECTED_FAILURE_DELAY_MS = 5000;

/**
 * Thrown by the retry processor when an attempt failed and attempts remain: BullMQ then moves the
 * job to its delayed set for exactly `delayMs` (the timetable's delay, already scaled), through
 * the custom backoff below. The delay is the one the attempt recorded in Postgres.
 */
export class RetryLater extends Error {
  constructor(readonly delayMs: number) {
    super(`attempt failed; the next one is due in ${delayMs} ms`);
    this.name = 'RetryLater';
  }
}

export const webhookBackoff: BackoffStrategy = (_attemptsMade, _type, err) =>
  err instanceof RetryLater ? Math.max(1, err.delayMs) : UNEXPECTED_FAILURE_DELAY_MS;

/**
 * The webhook queues' one producer: puts deliveries on their queues; jobs carry the delivery id only, which is also the job id, so
 * a delivery is never queued twice on one queue. First attempts and retries have separate queues
 * (and workers), so a first attempt never waits behind retries to slow endpoints.
 */
@Injectable()
export class DeliveryQueues {
  constructor(
    @InjectQueue(QUEUES.webhookDeliveries) readonly firstAttempts: Queue<DeliveryJob>,
    @InjectQueue(QUEUES.webhookRetries) readonly retries: Queue<DeliveryJob>,
  ) {}

  /** First attempts, now. A few tries for unexpected errors; anything still lost is the recovery sweep's. */
  async first(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.firstAttempts.addBulk(
      ids.map((id) => ({
        name: WEBHOOK_JOBS.deliver,
        data: { deliveryId: id },
        opts: { ...DELIVERY_JOB_OPTIONS, jobId: id, attempts: FIRST_ATTEMPT_JOB_ATTEMPTS },
      })),
    );
  }

  /**
   * The delivery's retry job, due in `delayMs`. The job then lives on, moved to "delayed" by the
   * backoff after each failed attempt, until the delivery is delivered or out of attempts. An
   * existing job is kept, but brought forward if it would wake later than wanted (a stale job
   * of an earlier series).
   */
  async retry(id: string, delayMs: number): Promise<void> {
    const existing = await this.retries.getJob(id);
    if (existing) {
      const state = await existing.getState();
      if (state === 'delayed') {
        if (existing.timestamp + (existing.delay ?? 0) > Date.now() + delayMs + 50) await existing.changeDelay(delayMs).catch(() => undefined);
        return;
      }
      if (state === 'waiting' || state === 'active' || state === 'prioritized' || state === 'waiting-children') return;
      await existing.remove().catch(() => undefined);
    }
    await this.retries.add(
      WEBHOOK_JOBS.deliver,
      { deliveryId: id },
      { ...DELIVERY_JOB_OPTIONS, jobId: id, attempts: RETRY_JOB_ATTEMPTS, delay: Math.max(0, delayMs) },
    );
  }

  /** Drops a waiting or delayed retry job (a resend starts its series on the first-attempt queue). */
  async dropRetry(id: string): Promise<void> {
    const job = await this.retries.getJob(id);
    if (job && (await job.getState()) !== 'active') await job.remove().catch(() => undefined);
  }
}
