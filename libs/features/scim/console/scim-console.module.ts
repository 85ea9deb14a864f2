import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { ConsoleModule } from '@web/console';
import { ConnectionsModule } from '@features/connections';
import { ScimModule } from '../scim.module';
import { ProvisioningLogPageController } from './provisioning-log.controller';
import { ScimSetupPageController } from './scim-setup.controller';

/** The Integrations section's SCIM pages: setting up provisioning from an identity provider, and the provisioning log. */
@Module({ imports: [CoreModule, ConsoleModule, ConnectionsModule, ScimModule], controllers: [ScimSetupPageController, ProvisioningLogPageController] })
export class ScimConsoleModule {}
