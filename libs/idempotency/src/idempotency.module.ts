import { Module } from '@nestjs/common';
import { CoreModule } from '@app/core';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStore } from './idempotency.store';

/**
 * Provides the store and the interceptor to the modules that import it; `@Idempotent()` binds the interceptor
 * to the handlers it marks, so calls that take no Idempotency-Key pay nothing for it.
 */
@Module({
  imports: [CoreModule],
  providers: [IdempotencyStore, IdempotencyInterceptor],
  // Nest builds the interceptor in the module of the controller it decorates: that module needs
  // the interceptor's dependencies, so the kernel (TransactionHost) is exported along with it.
  exports: [CoreModule, IdempotencyStore, IdempotencyInterceptor],
})
export class IdempotencyModule {}
