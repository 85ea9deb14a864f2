import { Module } from '@nestjs/common';
import { CasesController } from './cases.controller';

/** REST edge of cases; CasesService comes from the global DomainModule. */
@Module({ controllers: [CasesController] })
export class CasesModule {}
