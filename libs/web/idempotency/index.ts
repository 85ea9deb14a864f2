// The store (no HTTP; the worker's sweep imports only this module)…
export * from './idempotency.store';
export * from './idempotency-store.module';
// …and the api's interceptor with its decorator.
export * from './fingerprint';
export * from './idempotency.interceptor';
export * from './idempotency.module';
