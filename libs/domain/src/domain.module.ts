import { Global, Module } from '@nestjs/common';
import { EventsModule } from '@app/events';
import { CoreModule } from '@app/core';
import { CasesService } from './cases/cases.service';
import { ApiKeysService } from './connections/api-keys.service';
import { AuthInvalidationPublisher } from './connections/auth-invalidation';
import { ConnectionsService } from './connections/connections.service';
import { ConversationIngestService } from './conversations/conversation-ingest.service';
import { ConversationsService } from './conversations/conversations.service';
import { GroupsService } from './groups/groups.service';
import { Mailer } from './mail/mailer';
import { DomainsService } from './organisations/domains.service';
import { InvitationsService } from './people/invitations.service';
import { PeopleAdder } from './people/people-adder';
import { PeopleMail } from './people/people-mail';
import { PeopleService } from './people/people.service';
import { OrganisationsService } from './organisations/organisations.service';
import { PeopleManagersGuard } from './permissions/people-managers.guard';
import { PermissionsService } from './permissions/permissions.service';
import { WebhooksDomainModule } from './webhooks/webhooks-domain.module';

const services = [
  OrganisationsService,
  ConnectionsService,
  ApiKeysService,
  AuthInvalidationPublisher,
  Mailer,
  PermissionsService,
  PeopleManagersGuard,
  GroupsService,
  DomainsService,
  PeopleMail,
  PeopleAdder,
  PeopleService,
  InvitationsService,
  CasesService,
  ConversationsService,
  ConversationIngestService,
];

/** The platform's domain services; needs DatabaseModule and RedisModule in the application. */
@Global()
@Module({
  imports: [CoreModule, EventsModule, WebhooksDomainModule],
  providers: services,
  exports: [CoreModule, ...services],
})
export class DomainModule {}
