import { Module } from '@nestjs/common';
import { ConversationsController } from './conversations.controller';

/** REST edge of conversations (read only); ConversationsService comes from the global DomainModule. */
@Module({ controllers: [ConversationsController] })
export class ConversationsModule {}
