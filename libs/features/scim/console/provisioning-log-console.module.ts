import { Module } from '@nestjs/common';
import { ConsoleModule } from '@web/console';
import { ScimModule } from '../scim.module';
import { ProvisioningLogPageController } from './provisioning-log.controller';

/** The Integrations section's provisioning log (SCIM changes and refusals). */
@Module({ imports: [ConsoleModule, ScimModule], controllers: [ProvisioningLogPageController] })
export class ProvisioningLogConsoleModule {}
