import { Module } from '@nestjs/common';
import { PreparedStatementsModule, CoreModule } from '@kernel/database';
import { GroupsModule } from '@features/groups';
import { PeopleModule } from '@features/people';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimMembership } from './scim-membership';
import { ScimUsersRepository } from './scim-users.repository';
import { ScimUsersService } from './scim-users.service';

const providers = [ScimUsersRepository, ScimGroupsRepository, ScimMembership, ScimUsersService, ScimGroupsService];

/** The SCIM services, on the people and groups features' services, the transaction host and prepared statements. */
@Module({ imports: [CoreModule, PreparedStatementsModule, PeopleModule, GroupsModule], providers, exports: providers })
export class ScimModule {}
