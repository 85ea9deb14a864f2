import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { ConsoleModule } from '@web/console';
import { ConnectionsModule } from '@features/connections';
import { ScimSetupPageController } from './scim-setup.controller';

/** The Integrations section's SCIM pages: setting up provisioning from an identity provider. */
@Module({ imports: [CoreModule, ConsoleModule, ConnectionsModule], controllers: [ScimSetupPageController] })
export class ScimConsoleModule {}
