import { DynamicModule, Module } from '@nestjs/common';
import { DocumentsModule } from '../documents.module';
import { DocumentsOptions } from '../model/documents.options';
import { MetricsModule } from '@kernel/metrics';
import { DocumentIntakeLoop } from './document-intake.loop';
import { TranslationProcessor } from './translation.processor';

/** The worker's side of documents: the intake of accepted documents into the translations queue and its processor (the lost-job sweep is scheduled by ScheduleKeeper). */
@Module({})
export class DocumentsWorkerModule {
  /** `options` tune the retry policy and the sweep (tests); the defaults are the production ones. */
  static forRoot(options: DocumentsOptions = {}): DynamicModule {
    return {
      module: DocumentsWorkerModule,
      imports: [DocumentsModule.forRoot(options), MetricsModule],
      providers: [TranslationProcessor, DocumentIntakeLoop],
    };
  }
}
