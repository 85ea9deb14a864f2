import { Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { DeliveryJob, QUEUES, superviseWorker } from '@kernel/queue';
import { Job } from 'bullmq';
import { DeliveryQueues, webhookBackoff } from './delivery-queues';
import { WebhookSlots } from './webhook-slots';
import { DeliveryAttemptsService } from '../delivery-attempts.service';
import { attemptSpan } from './attempt-span';

/** First attempts. A failure hands the delivery to the retry queue with the timetable's delay. */
@Processor(QUEUES.webhookDeliveries, { maxStalledCount: 10, settings: { backoffStrategy: webhookBackoff } })
export class WebhookDeliveriesProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly attempts: DeliveryAttemptsService,
    private readonly queues: DeliveryQueues,
    private readonly config: AppConfig,
    private readonly slots: WebhookSlots,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.webhookConcurrency;
    superviseWorker(this.worker, QUEUES.webhookDeliveries);
    this.slots.watch(this.worker, 'f');
  }

  async process(job: Job<DeliveryJob>): Promise<string> {
    // 'parked' (its webhook has as many attempts in flight as allowed): the job ends, WebhookSlots parks the delivery.
    const outcome = await attemptSpan(job, () => this.attempts.attempt(job.data.deliveryId, this.slots.gate('f')));
    if (outcome.kind === 'failed' && outcome.retryInMs !== null) await this.queues.retry(job.data.deliveryId, outcome.retryInMs);
    // Already waiting for a retry (a repeated job): the retry queue owns it from here.
    if (outcome.kind === 'not_due') await this.queues.retry(job.data.deliveryId, outcome.inMs);
    return outcome.kind;
  }

  /** Closed before the DataSource goes (onApplicationShutdown), so jobs in flight can finish. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
