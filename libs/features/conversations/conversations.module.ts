import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { EventsModule } from '@kernel/events';
import { ConversationIngestService } from './conversation-ingest.service';
import { ConversationsService } from './conversations.service';

const providers = [ConversationsService, ConversationIngestService];

/** Conversations: reads for partners, and the platform's ingest of turns, facts and summaries. */
@Module({ imports: [CoreModule, EventsModule], providers, exports: providers })
export class ConversationsModule {}
