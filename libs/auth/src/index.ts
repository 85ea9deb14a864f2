export * from './auth.decorators';
export * from './auth.module';
export * from './bearer-auth.guard';
export * from './bearer-token';
export * from './client-ip';
export * from './key-cache';
export * from './principal';
export * from './refused-key-throttle';
