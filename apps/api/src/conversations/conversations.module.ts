import { Module } from '@nestjs/common';
import { DomainModule } from '@app/domain';
import { ConversationsController } from './conversations.controller';

/** REST edge of conversations (read only). */
@Module({ imports: [DomainModule], controllers: [ConversationsController] })
export class ConversationsModule {}
