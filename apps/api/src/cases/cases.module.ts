import { Module } from '@nestjs/common';
import { DomainModule } from '@app/domain';
import { IdempotencyModule } from '@app/idempotency';
import { CasesController } from './cases.controller';

/** REST edge of cases. */
@Module({ imports: [DomainModule, IdempotencyModule], controllers: [CasesController] })
export class CasesModule {}
