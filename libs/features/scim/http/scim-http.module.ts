import { Module } from '@nestjs/common';
import { ScimDiscoveryController } from './scim-discovery.controller';
import { ScimModule } from '../scim.module';
import { ScimGroupsController } from './scim-groups.controller';
import { ScimUsersController } from './scim-users.controller';

/** SCIM 2.0 under /scim/v2/ (Okta, Microsoft Entra ID). Left out of the OpenAPI description (it is a SCIM service, described by its own discovery endpoints). */
@Module({ imports: [ScimModule], controllers: [ScimUsersController, ScimGroupsController, ScimDiscoveryController] })
export class ScimHttpModule {}
