import { Injectable } from '@nestjs/common';
import { MAINTENANCE_JOBS } from '@kernel/queue';
import { ProvisioningRetentionService } from '../provisioning-retention.service';
import { ScimRefusalWarningService } from '../scim-refusal-warning.service';

const HANDLED: readonly string[] = [MAINTENANCE_JOBS.sweepProvisioningEvents, MAINTENANCE_JOBS.warnScimRefusals];

/**
 * The SCIM jobs of the maintenance queue, for the maintenance processor to hand over (as it does
 * the webhook jobs): the provisioning log's 90-day sweep and the refusal warning.
 */
@Injectable()
export class ScimMaintenanceJobs {
  constructor(
    private readonly retention: ProvisioningRetentionService,
    private readonly warning: ScimRefusalWarningService,
  ) {}

  handles(name: string): boolean {
    return HANDLED.includes(name);
  }

  /** Runs one job; answers a count (rows deleted, connections warned about). */
  async run(name: string, stopping: () => boolean = () => false): Promise<number> {
    switch (name) {
      case MAINTENANCE_JOBS.sweepProvisioningEvents:
        return this.retention.sweep(undefined, stopping);
      case MAINTENANCE_JOBS.warnScimRefusals:
        return this.warning.run();
      default:
        throw new Error(`not a SCIM maintenance job: ${name}`);
    }
  }
}
