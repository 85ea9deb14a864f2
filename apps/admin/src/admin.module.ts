import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@kernel/config';
import { DatabaseModule } from '@kernel/database';
import { ConsoleAccessModule } from '@web/console';
import { CasesModule } from '@features/cases';
import { ConnectionsModule } from '@features/connections';
import { ConversationsModule } from '@features/conversations';
import { ENTITIES } from '@features/entities';
import { GroupsModule } from '@features/groups';
import { OrganisationsModule } from '@features/organisations';
import { PeopleModule } from '@features/people';
import { WebhooksModule } from '@features/webhooks';

/**
 * The operator CLI's context: no routes, no queues; the services its commands call (whose changes
 * announce auth-cache invalidations through Redis once their transaction commits), the console's
 * sign-in links and the delivery log.
 */
@Module({})
export class AdminModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot('admin', { entities: ENTITIES }),
        OrganisationsModule,
        ConnectionsModule,
        GroupsModule,
        PeopleModule,
        CasesModule,
        ConversationsModule,
        WebhooksModule,
        ConsoleAccessModule,
      ],
    };
  }
}
