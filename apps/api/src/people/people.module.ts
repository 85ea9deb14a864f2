import { Module } from '@nestjs/common';
import { DomainModule } from '@app/domain';
import { IdempotencyModule } from '@app/idempotency';
import { InvitationsController } from './invitations.controller';
import { UsersController } from './users.controller';

/** People and invitations over REST. */
@Module({ imports: [DomainModule, IdempotencyModule], controllers: [UsersController, InvitationsController] })
export class PeopleModule {}
