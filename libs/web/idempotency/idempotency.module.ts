import { Module } from '@nestjs/common';
import { MetricsModule } from '@kernel/metrics';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyStoreModule } from './idempotency-store.module';

/**
 * The api's part: the interceptor, over the store. `@Idempotent()` binds the interceptor to the
 * handlers it marks, so calls that take no Idempotency-Key pay nothing for it.
 */
@Module({
  imports: [IdempotencyStoreModule, MetricsModule],
  providers: [IdempotencyInterceptor],
  // Nest builds the interceptor in the module of the controller it decorates: its dependencies go along.
  exports: [IdempotencyStoreModule, MetricsModule, IdempotencyInterceptor],
})
export class IdempotencyModule {}
