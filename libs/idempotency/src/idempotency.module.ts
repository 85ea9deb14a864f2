import { Global, Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStore } from './idempotency.store';

/**
 * Provides the store and the interceptor to every module; `@Idempotent()` binds the interceptor
 * to the handlers it marks, so calls that take no Idempotency-Key pay nothing for it.
 */
@Global()
@Module({
  providers: [IdempotencyStore, IdempotencyInterceptor],
  exports: [IdempotencyStore, IdempotencyInterceptor],
})
export class IdempotencyModule {}
