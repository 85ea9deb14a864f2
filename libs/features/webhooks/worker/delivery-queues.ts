import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { DELIVERY_JOB_OPTIONS, DeliveryJob, FIRST_ATTEMPT_JOB_ATTEMPTS, QUEUES, RETRY_JOB_ATTEMPTS, WEBHOOK_JOBS } from '@kernel/queue';
import { OutboxRelayService } from '../outbox-relay.service';
import { bullMetadata, inContext, isTracing, TraceContext } from '@kernel/telemetry';
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
 * Tracing on: a job's telemetry options. With a context, the job continues it; without one (an
 * event made while tracing was off), the job carries none rather than whatever context is active
 * where it is queued (a slot freed inside another delivery's attempt). Off: nothing.
 */
const telemetryOf = (trace: TraceContext | undefined) => {
  if (!isTracing()) return {};
  const metadata = bullMetadata(trace);
  return metadata ? { telemetry: { metadata } } : { telemetry: { omitContext: true } };
};

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
    private readonly relay: OutboxRelayService,
  ) {}

  /**
   * Tracing on: each delivery's trace context — the one given (the relay's span, for a new
   * delivery), else the one stored in its row (the request that made its event). One query, only
   * for deliveries not given one. Off: nothing, no query.
   */
  private async traceContexts(ids: string[], given?: ReadonlyMap<string, TraceContext>): Promise<ReadonlyMap<string, TraceContext> | undefined> {
    if (!isTracing()) return undefined;
    const missing = ids.filter((id) => !given?.has(id));
    if (missing.length === 0) return given;
    const stored = await this.relay.traceContexts(missing);
    for (const [id, trace] of given ?? []) stored.set(id, trace);
    return stored;
  }

  /**
   * First attempts, now. A few tries for unexpected errors; anything still lost is the recovery sweep's.
   * `traces` (tracing on) gives new deliveries' jobs the relay span's context; the others take the
   * context stored with the delivery.
   */
  async first(ids: string[], traces?: ReadonlyMap<string, TraceContext>): Promise<void> {
    if (ids.length === 0) return;
    const contexts = await this.traceContexts(ids, traces);
    await this.firstAttempts.addBulk(
      ids.map((id) => ({
        name: WEBHOOK_JOBS.deliver,
        data: { deliveryId: id },
        opts: { ...DELIVERY_JOB_OPTIONS, jobId: id, attempts: FIRST_ATTEMPT_JOB_ATTEMPTS, ...telemetryOf(contexts?.get(id)) },
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
    // BullMQ's add (unlike addBulk) always carries the context active around it: the stored one is made active for it.
    const trace = (await this.traceContexts([id]))?.get(id);
    const { telemetry } = telemetryOf(trace);
    await inContext(trace, () =>
      this.retries.add(
        WEBHOOK_JOBS.deliver,
        { deliveryId: id },
        { ...DELIVERY_JOB_OPTIONS, jobId: id, attempts: RETRY_JOB_ATTEMPTS, delay: Math.max(0, delayMs), ...(telemetry?.omitContext ? { telemetry } : {}) },
      ),
    );
  }

  /** Drops a waiting or delayed retry job (a resend starts its series on the first-attempt queue). */
  async dropRetry(id: string): Promise<void> {
    const job = await this.retries.getJob(id);
    if (job && (await job.getState()) !== 'active') await job.remove().catch(() => undefined);
  }
}
