import { Module } from '@nestjs/common';
import { PreparedStatementsModule, CoreModule } from '@kernel/database';
import { MetricsModule } from '@kernel/metrics';
import { GroupsModule } from '@features/groups';
import { PeopleModule } from '@features/people';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimMembership } from './scim-membership';
import { ScimUsersRepository } from './scim-users.repository';
import { ScimUsersService } from './scim-users.service';
import { ProvisioningLogService } from './provisioning-log.service';

const providers = [ScimUsersRepository, ScimGroupsRepository, ScimMembership, ScimUsersService, ScimGroupsService, ProvisioningLogService];

/** The SCIM services and the provisioning log, on the people and groups features' services, the transaction host and prepared statements. */
@Module({ imports: [CoreModule, PreparedStatementsModule, MetricsModule, PeopleModule, GroupsModule], providers, exports: providers })
export class ScimModule {}
