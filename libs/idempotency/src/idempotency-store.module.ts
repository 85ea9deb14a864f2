import { Module } from '@nestjs/common';
import { IdempotencyStore } from './idempotency.store';

/** The store alone, without HTTP: what the worker imports for its sweep. */
@Module({
  providers: [IdempotencyStore],
  exports: [IdempotencyStore],
})
export class IdempotencyStoreModule {}
