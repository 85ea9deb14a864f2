import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { MAINTENANCE_JOBS, QUEUES } from '@app/queue';
import { Queue } from 'bullmq';

const MINUTE_MS = 60_000;

/** Schedulers of the webhook maintenance jobs (upserted by id: every replica may run this, there is one schedule). */
export const WEBHOOK_SCHEDULES = [
  { job: MAINTENANCE_JOBS.sweepDeliveries, every: 24 * 60 * MINUTE_MS },
  { job: MAINTENANCE_JOBS.switchOffFailingWebhooks, every: 5 * MINUTE_MS },
  { job: MAINTENANCE_JOBS.relayOutbox, every: MINUTE_MS },
] as const;

@Injectable()
export class WebhookScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(WebhookScheduler.name);

  constructor(@InjectQueue(QUEUES.maintenance) private readonly queue: Queue) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const { job, every } of WEBHOOK_SCHEDULES) {
      await this.queue.upsertJobScheduler(job, { every }, { name: job, opts: { removeOnComplete: 100, removeOnFail: 100 } });
    }
    this.logger.log(`scheduled ${WEBHOOK_SCHEDULES.map((s) => `${s.job} every ${s.every / MINUTE_MS} min`).join(', ')}`);
  }
}
