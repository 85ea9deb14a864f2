import { Module } from '@nestjs/common';
import { InvitationsController } from './invitations.controller';
import { UsersController } from './users.controller';

/** People and invitations over REST. */
@Module({ controllers: [UsersController, InvitationsController] })
export class PeopleModule {}
