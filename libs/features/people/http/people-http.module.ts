import { Module } from '@nestjs/common';
import { PeopleModule } from '../people.module';
import { IdempotencyModule } from '@web/idempotency';
import { InvitationsController } from './invitations.controller';
import { UsersController } from './users.controller';

/** People and invitations over REST. */
@Module({ imports: [PeopleModule, IdempotencyModule], controllers: [UsersController, InvitationsController] })
export class PeopleHttpModule {}
