import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { AuthInvalidationModule } from '@kernel/redis';
import { DomainsService } from './domains.service';
import { OrganisationsService } from './organisations.service';

const providers = [OrganisationsService, DomainsService];

/** Organisations, their address allow-list and data policy, and their verified mail domains. */
@Module({ imports: [CoreModule, AuthInvalidationModule], providers, exports: providers })
export class OrganisationsModule {}
