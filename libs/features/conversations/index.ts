export * from './cli/conversation.command';
export * from './conversation-ingest.service';
export * from './conversation.entity';
export * from './conversations.module';
export * from './fact.entity';
export * from './http/conversations-http.module';
export * from './summary.entity';
export * from './turn.entity';
