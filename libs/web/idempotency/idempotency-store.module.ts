import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { IdempotencyStore } from './idempotency.store';

/**
 * The store alone, without HTTP: what the worker imports for its sweep. The kernel (TransactionHost)
 * is exported along with it: Nest builds the interceptor in the module of the controller it
 * decorates, and that module needs the interceptor's dependencies.
 */
@Module({
  imports: [CoreModule],
  providers: [IdempotencyStore],
  exports: [CoreModule, IdempotencyStore],
})
export class IdempotencyStoreModule {}
