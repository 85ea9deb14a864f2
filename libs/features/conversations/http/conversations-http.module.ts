import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations.module';
import { ConversationsController } from './conversations.controller';

/** REST edge of conversations (read only). */
@Module({ imports: [ConversationsModule], controllers: [ConversationsController] })
export class ConversationsHttpModule {}
