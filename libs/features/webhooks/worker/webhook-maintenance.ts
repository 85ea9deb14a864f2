import { Injectable } from '@nestjs/common';
import { MAINTENANCE_JOBS } from '@kernel/queue';
import { DeliveryRetentionService } from '../delivery-retention.service';
import { WebhookSwitchOffService } from '../webhook-switch-off.service';
import { WebhookSwitchOffWarningService } from '../webhook-switch-off-warning.service';

const HANDLED: readonly string[] = [MAINTENANCE_JOBS.sweepDeliveries, MAINTENANCE_JOBS.switchOffFailingWebhooks];

/**
 * The webhook jobs of the maintenance queue, for the maintenance processor to hand over:
 * `if (this.webhookJobs.handles(job.name)) return this.webhookJobs.run(job.name, () => this.worker.closing)`.
 */
@Injectable()
export class WebhookMaintenanceJobs {
  constructor(
    private readonly retention: DeliveryRetentionService,
    private readonly switchOff: WebhookSwitchOffService,
    private readonly warning: WebhookSwitchOffWarningService,
  ) {}

  handles(name: string): boolean {
    return HANDLED.includes(name);
  }

  /** Runs one job; answers a count (deliveries deleted, webhooks switched off). The switch-off check also sends the 24-hour warnings. */
  async run(name: string, stopping: () => boolean = () => false): Promise<number> {
    switch (name) {
      case MAINTENANCE_JOBS.sweepDeliveries:
        return this.retention.sweep(undefined, stopping);
      case MAINTENANCE_JOBS.switchOffFailingWebhooks:
        // The 24-hour warning rides on the switch-off check (every five minutes): first the
        // warnings, then the switch-offs; the count is the webhooks switched off.
        await this.warning.run();
        return this.switchOff.run();
      default:
        throw new Error(`not a webhook maintenance job: ${name}`);
    }
  }
}
