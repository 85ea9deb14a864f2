import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { DeliveryJob, QUEUES } from '@app/queue';
import { BackoffStrategy, JobsOptions, Queue } from 'bullmq';

export const DELIVERY_JOB = 'deliver';
/** The custom backoff that makes BullMQ's retries follow the contract's timetable. */
export const WEBHOOK_BACKOFF = 'webhook-timetable';
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

// Postgres holds the payload and the log, so finished jobs leave Redis at once (a failing
// endpoint must not fill it) and their id is free for a resend's new series.
const BASE: JobsOptions = { removeOnComplete: true, removeOnFail: true, stackTraceLimit: 0, backoff: { type: WEBHOOK_BACKOFF } };

/**
 * Puts deliveries on their queues; jobs carry the delivery id only, which is also the job id, so
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
    await this.firstAttempts.addBulk(ids.map((id) => ({ name: DELIVERY_JOB, data: { deliveryId: id }, opts: { ...BASE, jobId: id, attempts: 3 } })));
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
    // Attempts is a ceiling only: Postgres decides when a delivery has had its eight.
    await this.retries.add(DELIVERY_JOB, { deliveryId: id }, { ...BASE, jobId: id, attempts: 50, delay: Math.max(0, delayMs) });
  }

  /** Drops a waiting or delayed retry job (a resend starts its series on the first-attempt queue). */
  async dropRetry(id: string): Promise<void> {
    const job = await this.retries.getJob(id);
    if (job && (await job.getState()) !== 'active') await job.remove().catch(() => undefined);
  }
}
