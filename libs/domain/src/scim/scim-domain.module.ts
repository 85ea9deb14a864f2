import { Module } from '@nestjs/common';
import { ScimGroupsRepository } from './scim-groups.repository';
import { ScimGroupsService } from './scim-groups.service';
import { ScimMembership } from './scim-membership';
import { ScimUsersRepository } from './scim-users.repository';
import { ScimUsersService } from './scim-users.service';

const providers = [ScimUsersRepository, ScimGroupsRepository, ScimMembership, ScimUsersService, ScimGroupsService];

/**
 * The SCIM services. Relies on the global DomainModule for people, invitations, groups and the
 * transaction host; its providers can move into DomainModule as they are.
 */
@Module({ providers, exports: providers })
export class ScimDomainModule {}
