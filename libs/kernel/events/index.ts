export * from './events';
export * from './events.module';
export * from './outbox';
