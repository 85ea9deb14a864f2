import { Module } from '@nestjs/common';
import { Clock, SystemClock } from '@kernel/core';
import { CursorCodec } from './cursor-codec';
import { TransactionHost } from './transaction-host';

/** The kernel's providers (one instance per application); needs TypeORM's DataSource (DatabaseModule). */
@Module({
  providers: [TransactionHost, CursorCodec, { provide: Clock, useClass: SystemClock }],
  exports: [TransactionHost, CursorCodec, Clock],
})
export class CoreModule {}
