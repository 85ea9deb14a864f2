import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { EventsModule } from '@kernel/events';
import { MailModule } from '@kernel/mail';
import { GroupsModule } from '@features/groups';
import { InvitationsService } from './invitations.service';
import { PeopleAdder } from './people-adder';
import { PeopleMail } from './people-mail';
import { PeopleService } from './people.service';

const providers = [PeopleMail, InvitationsService, PeopleAdder, PeopleService];

/** People of an organisation and their invitations (REST, SCIM and the CLI add people through these). */
@Module({ imports: [CoreModule, EventsModule, MailModule, GroupsModule], providers, exports: providers })
export class PeopleModule {}
