import { Module } from '@nestjs/common';
import { ConsoleModule } from '@web/console';
import { ConnectionsModule } from '../connections.module';
import { ConnectionsPageController } from './connections.controller';

/** The Integrations section's connection and key pages. */
@Module({ imports: [ConsoleModule, ConnectionsModule], controllers: [ConnectionsPageController] })
export class ConnectionsConsoleModule {}
