import { Injectable } from '@nestjs/common';
import { MAINTENANCE_JOBS } from '@app/queue';
import { OutboxRelayLoop } from './outbox-relay.loop';
import { DeliveryRetentionService, WebhookSwitchOffService } from '@app/domain';

const HANDLED: readonly string[] = [MAINTENANCE_JOBS.sweepDeliveries, MAINTENANCE_JOBS.switchOffFailingWebhooks, MAINTENANCE_JOBS.relayOutbox];

/**
 * The webhook jobs of the maintenance queue, for the maintenance processor to hand over:
 * `if (this.webhookJobs.handles(job.name)) return this.webhookJobs.run(job.name, () => this.worker.closing)`.
 */
@Injectable()
export class WebhookMaintenanceJobs {
  constructor(
    private readonly retention: DeliveryRetentionService,
    private readonly switchOff: WebhookSwitchOffService,
    private readonly relayLoop: OutboxRelayLoop,
  ) {}

  handles(name: string): boolean {
    return HANDLED.includes(name);
  }

  /** Runs one job; answers a count (deliveries deleted, webhooks switched off, deliveries re-queued). */
  async run(name: string, stopping: () => boolean = () => false): Promise<number> {
    switch (name) {
      case MAINTENANCE_JOBS.sweepDeliveries:
        return this.retention.sweep(undefined, stopping);
      case MAINTENANCE_JOBS.switchOffFailingWebhooks:
        return this.switchOff.run();
      case MAINTENANCE_JOBS.relayOutbox:
        // The loop relays continuously; the scheduled job is its watchdog: a pass plus lost-job recovery.
        await this.relayLoop.tick();
        return this.relayLoop.recover();
      default:
        throw new Error(`not a webhook maintenance job: ${name}`);
    }
  }
}
