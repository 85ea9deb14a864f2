export * from './redis.tokens';
export * from './redis.module';
export * from './pub-sub';
export * from './redis-outage';
export * from './redis-connection';
export * from './auth-invalidation';
