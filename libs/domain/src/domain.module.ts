import { Global, Module } from '@nestjs/common';
import { Clock, SystemClock } from './common/clock';
import { TransactionHost } from './common/transaction-host';
import { ApiKeysService } from './connections/api-keys.service';
import { AuthInvalidationPublisher } from './connections/auth-invalidation';
import { ConnectionsService } from './connections/connections.service';
import { GroupsService } from './groups/groups.service';
import { Mailer } from './mail/mailer';
import { OrganisationsService } from './organisations/organisations.service';
import { PeopleManagersGuard } from './permissions/people-managers.guard';
import { PermissionsService } from './permissions/permissions.service';

const services = [
  OrganisationsService,
  ConnectionsService,
  ApiKeysService,
  AuthInvalidationPublisher,
  Mailer,
  PermissionsService,
  PeopleManagersGuard,
  GroupsService,
];

/** The platform's domain services; needs DatabaseModule and RedisModule in the application. */
@Global()
@Module({
  providers: [TransactionHost, { provide: Clock, useClass: SystemClock }, ...services],
  exports: [TransactionHost, Clock, ...services],
})
export class DomainModule {}
