import { Module } from '@nestjs/common';
import { PreparedStatementsModule } from '@app/database';
import { DomainModule } from '../domain.module';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimMembership } from './scim-membership';
import { ScimUsersRepository } from './scim-users.repository';
import { ScimUsersService } from './scim-users.service';

const providers = [ScimUsersRepository, ScimGroupsRepository, ScimMembership, ScimUsersService, ScimGroupsService];

/** The SCIM services, on the domain's people, invitations, groups, transaction host and prepared statements. */
@Module({ imports: [DomainModule, PreparedStatementsModule], providers, exports: providers })
export class ScimDomainModule {}
