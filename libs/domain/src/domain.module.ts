import { Module } from '@nestjs/common';
import { CoreModule } from '@app/core';
import { EventsModule } from '@app/events';
import { RedisModule } from '@app/redis';
import { CasesService } from './cases/cases.service';
import { ApiKeysService } from './connections/api-keys.service';
import { AuthInvalidationPublisher } from './connections/auth-invalidation';
import { ConnectionsService } from './connections/connections.service';
import { ConsoleAccessService } from './console/console-access.service';
import { ConversationIngestService } from './conversations/conversation-ingest.service';
import { ConversationsService } from './conversations/conversations.service';
import { GroupsService } from './groups/groups.service';
import { MailModule } from './mail/mail.module';
import { DomainsService } from './organisations/domains.service';
import { InvitationsService } from './people/invitations.service';
import { PeopleAdder } from './people/people-adder';
import { PeopleMail } from './people/people-mail';
import { PeopleService } from './people/people.service';
import { OrganisationsService } from './organisations/organisations.service';
import { PeopleManagersService } from './permissions/people-managers.service';
import { PermissionsService } from './permissions/permissions.service';

const services = [
  OrganisationsService,
  ConnectionsService,
  ApiKeysService,
  AuthInvalidationPublisher,
  PermissionsService,
  PeopleManagersService,
  GroupsService,
  DomainsService,
  PeopleMail,
  PeopleAdder,
  PeopleService,
  InvitationsService,
  CasesService,
  ConversationsService,
  ConversationIngestService,
  ConsoleAccessService,
];

/**
 * The platform's domain services (people, groups, cases, conversations, connections and keys);
 * needs DatabaseModule in the application. Webhooks, SCIM and documents are modules of their own
 * that import this one where they need it, never the other way round.
 */
@Module({
  imports: [CoreModule, EventsModule, RedisModule, MailModule],
  providers: services,
  exports: [CoreModule, MailModule, ...services],
})
export class DomainModule {}
