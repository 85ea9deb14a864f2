/** Injection token of the shared ioredis command connection. */
export const REDIS = Symbol('REDIS');
