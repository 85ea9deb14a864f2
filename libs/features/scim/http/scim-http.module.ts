import { Module } from '@nestjs/common';
import { useErrorDialect } from '@web/http';
import { ScimModule } from '../scim.module';
import { ScimDiscoveryController } from './scim-discovery.controller';
import { SCIM_ERRORS } from './scim-errors';
import { ScimGroupsController } from './scim-groups.controller';
import { ScimMeController } from './scim-me.controller';
import { ScimUsersController } from './scim-users.controller';
import { ProvisioningEventsController } from './provisioning-events.controller';
import { ScimRefusals } from './scim-refusals';

/**
 * SCIM 2.0 under /scim/v2/ (Okta, Microsoft Entra ID). Left out of the OpenAPI description (it is a
 * SCIM service, described by its own discovery endpoints). Composing it makes the web kit answer
 * errors under /scim/ in RFC 7644's schema (SCIM_ERRORS), before the api listens, and log the
 * refusals (ScimRefusals). The provisioning log's REST list (`/v1/provisioning-events`) is described.
 */
@Module({
  imports: [ScimModule],
  controllers: [ScimUsersController, ScimGroupsController, ScimDiscoveryController, ScimMeController, ProvisioningEventsController],
  providers: [ScimRefusals],
})
export class ScimHttpModule {
  constructor() {
    useErrorDialect(SCIM_ERRORS);
  }
}
