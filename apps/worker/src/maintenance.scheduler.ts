import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { MAINTENANCE_JOBS, QUEUES } from '@app/queue';
import { Queue } from 'bullmq';

const HOUR_MS = 60 * 60 * 1000;

/**
 * Registers the repeatable maintenance jobs. An upsert by a fixed scheduler id is idempotent,
 * so every replica may run it on start: there is still one schedule.
 */
@Injectable()
export class MaintenanceScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(MaintenanceScheduler.name);

  constructor(@InjectQueue(QUEUES.maintenance) private readonly queue: Queue) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.upsertJobScheduler(
      MAINTENANCE_JOBS.sweepIdempotencyKeys,
      { every: HOUR_MS },
      { name: MAINTENANCE_JOBS.sweepIdempotencyKeys, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
    this.logger.log(`scheduled ${MAINTENANCE_JOBS.sweepIdempotencyKeys} every hour`);
  }
}
