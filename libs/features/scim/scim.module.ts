import { Module } from '@nestjs/common';
import { FreshStatisticsModule, PreparedStatementsModule, CoreModule } from '@kernel/database';
import { MetricsModule } from '@kernel/metrics';
import { RedisModule } from '@kernel/redis';
import { GroupsModule } from '@features/groups';
import { PeopleModule } from '@features/people';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimMembership } from './scim-membership';
import { ScimUsersRepository } from './scim-users.repository';
import { ScimUsersService } from './scim-users.service';
import { ProvisioningLogService } from './provisioning-log.service';
import { ScimWalks } from './scim-walks';

const providers = [ScimUsersRepository, ScimGroupsRepository, ScimWalks, ScimMembership, ScimUsersService, ScimGroupsService, ProvisioningLogService];

/**
 * The SCIM services and the provisioning log, on the people and groups features' services, the
 * transaction host, prepared statements, fresh statistics, metrics and Redis (ScimWalks).
 */
@Module({
  imports: [CoreModule, PreparedStatementsModule, FreshStatisticsModule, MetricsModule, RedisModule, PeopleModule, GroupsModule],
  providers,
  exports: providers,
})
export class ScimModule {}
