import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { MailModule } from '@kernel/mail';
import { ProvisioningRetentionService } from '../provisioning-retention.service';
import { ScimRefusalWarningService } from '../scim-refusal-warning.service';
import { ScimMaintenanceJobs } from './scim-maintenance';

/** The worker's SCIM side: the provisioning log's sweep and the refusal warning, run as maintenance jobs (scheduled by ScheduleKeeper). */
@Module({
  imports: [CoreModule, MailModule],
  providers: [ProvisioningRetentionService, ScimRefusalWarningService, ScimMaintenanceJobs],
  exports: [ScimMaintenanceJobs],
})
export class ScimWorkerModule {}
