import { Module } from '@nestjs/common';
import { CoreModule } from '@kernel/database';
import { CasesService } from './cases.service';

/** Cases: one per external reference, open or closed. */
@Module({ imports: [CoreModule], providers: [CasesService], exports: [CasesService] })
export class CasesModule {}
