import { Module } from '@nestjs/common';
import { CasesModule } from '../cases.module';
import { IdempotencyModule } from '@web/idempotency';
import { CasesController } from './cases.controller';

/** REST edge of cases. */
@Module({ imports: [CasesModule, IdempotencyModule], controllers: [CasesController] })
export class CasesHttpModule {}
