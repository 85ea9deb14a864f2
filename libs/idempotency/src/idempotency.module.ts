import { Module } from '@nestjs/common';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStoreModule } from './idempotency-store.module';

/**
 * The api's part: the interceptor, over the store. `@Idempotent()` binds the interceptor to the
 * handlers it marks, so calls that take no Idempotency-Key pay nothing for it.
 */
@Module({
  imports: [IdempotencyStoreModule],
  providers: [IdempotencyInterceptor],
  exports: [IdempotencyStoreModule, IdempotencyInterceptor],
})
export class IdempotencyModule {}
