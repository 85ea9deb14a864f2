import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { AuthInvalidationModule } from '@kernel/redis';
import { OrganisationsModule } from '@features/organisations';
import { ApiKeysService } from './api-keys.service';
import { ConnectionsService } from './connections.service';

const providers = [ConnectionsService, ApiKeysService];

/** Connections (a partner system's scopes and modules) and their keys; ApiKeysService is the api's KeyLookup. */
@Module({ imports: [CoreModule, AuthInvalidationModule, OrganisationsModule], providers, exports: providers })
export class ConnectionsModule {}
