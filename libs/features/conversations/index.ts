/**
 * Conversations: what partners read (REST /v1/conversations) and what the platform ingests (turns,
 * facts, summaries), with their events. The only door to this feature from outside it.
 */
export * from './conversation-ingest.service';
export * from './conversation.entity';
export * from './conversations.module';
export * from './fact.entity';
export * from './summary.entity';
export * from './turn.entity';
