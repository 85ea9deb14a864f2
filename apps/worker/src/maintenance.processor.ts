import { Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { IdempotencyStore } from '@web/idempotency';
import { MAINTENANCE_JOBS, QUEUES, superviseWorker } from '@kernel/queue';
import { Job, UnrecoverableError } from 'bullmq';
import { ScimMaintenanceJobs } from '@features/scim/worker';
import { WebhookMaintenanceJobs } from '@features/webhooks/worker';

/** Rows deleted per statement: short transactions, no long lock on the table. */
export const SWEEP_BATCH_SIZE = 1000;

/** Housekeeping jobs of the maintenance queue (scheduled by ScheduleKeeper, from libs/queue SCHEDULES). */
@Processor(QUEUES.maintenance)
export class MaintenanceProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly idempotency: IdempotencyStore,
    private readonly webhookJobs: WebhookMaintenanceJobs,
    private readonly scimJobs: ScimMaintenanceJobs,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    superviseWorker(this.worker, QUEUES.maintenance);
  }

  async process(job: Job): Promise<number> {
    switch (job.name) {
      case MAINTENANCE_JOBS.sweepIdempotencyKeys:
        return this.sweepIdempotencyKeys();
      default:
        if (this.webhookJobs.handles(job.name)) return this.webhookJobs.run(job.name, () => Boolean(this.worker.closing));
        if (this.scimJobs.handles(job.name)) return this.scimJobs.run(job.name, () => Boolean(this.worker.closing));
        throw new UnrecoverableError(`unknown maintenance job "${job.name}"`);
    }
  }

  /**
   * @nestjs/bullmq closes workers in onApplicationShutdown, the same phase in which TypeORM
   * destroys the DataSource; closing here (the phase before) lets a job in flight finish while
   * the database is still there.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }

  /** Batch by batch until a short one; stops early on shutdown (the next run picks up the rest). */
  private async sweepIdempotencyKeys(): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.idempotency.sweepExpired(SWEEP_BATCH_SIZE);
      total += deleted;
      if (deleted < SWEEP_BATCH_SIZE || this.worker.closing) return total;
    }
  }
}
