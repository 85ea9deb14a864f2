export * from './fingerprint';
export * from './idempotency.interceptor';
export * from './idempotency.module';
export * from './idempotency.store';
