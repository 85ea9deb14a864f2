import { Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { DeliveryJob, QUEUES, superviseWorker } from '@kernel/queue';
import { DelayedError, Job } from 'bullmq';
import { RetryLater, webhookBackoff } from './delivery-queues';
import { WebhookSlots } from './webhook-slots';
import { DeliveryAttemptsService } from '../delivery-attempts.service';
import { attemptSpan } from './attempt-span';

/**
 * Attempts 2 to 8. A failed attempt with attempts left throws RetryLater, and the custom backoff
 * delays the same job by the timetable's delay. A job that wakes early (a stalled job re-run after
 * a crash whose attempt was already recorded) is moved back to the delivery's time without an attempt.
 */
@Processor(QUEUES.webhookRetries, { maxStalledCount: 10, settings: { backoffStrategy: webhookBackoff } })
export class WebhookRetriesProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly attempts: DeliveryAttemptsService,
    private readonly config: AppConfig,
    private readonly slots: WebhookSlots,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.webhookConcurrency;
    superviseWorker(this.worker, QUEUES.webhookRetries);
    this.slots.watch(this.worker, 'r');
  }

  async process(job: Job<DeliveryJob>, token?: string): Promise<string> {
    // 'parked' (its webhook has as many attempts in flight as allowed): the job ends, WebhookSlots parks the delivery.
    const outcome = await attemptSpan(job, () => this.attempts.attempt(job.data.deliveryId, this.slots.gate('r')));
    if (outcome.kind === 'failed' && outcome.retryInMs !== null) {
      await this.noteDue(job, outcome.retryInMs);
      throw new RetryLater(outcome.retryInMs);
    }
    if (outcome.kind === 'not_due') {
      await this.noteDue(job, outcome.inMs);
      await job.moveToDelayed(Date.now() + outcome.inMs, token);
      throw new DelayedError();
    }
    return outcome.kind;
  }

  /** Writes when the job is due again, for the queue-age metric (BullMQ forgets a delay once it ends); never fails the job. */
  private async noteDue(job: Job<DeliveryJob>, inMs: number): Promise<void> {
    await job.updateData({ deliveryId: job.data.deliveryId, dueAt: Date.now() + inMs }).catch(() => undefined);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
