import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { CoreModule, PreparedStatementsModule } from '@kernel/database';
import { EventsModule } from '@kernel/events';
import { QueuesModule } from '@kernel/queue';
import { DocumentIntakeService } from './document-intake.service';
import { DocumentTranslatorService } from './document-translator.service';
import { DEFAULT_DOCUMENTS_OPTIONS, DOCUMENTS_OPTIONS, DocumentsOptions } from './model/documents.options';
import { DocumentsService } from './documents.service';
import { createTranslationEngine } from './engines/engine.factory';
import { TranslationEngine } from './engines/translation-engine';
import { TranslationQueue } from './translation-queue';

/**
 * Documents and their translation: the services, the engine TRANSLATION_ENGINE names and the
 * translations queue. Needs the application's ConfigModule, DatabaseModule and QueueModule (BullMQ's root connection).
 */
@Module({})
export class DocumentsModule {
  static forRoot(options: DocumentsOptions = {}): DynamicModule {
    return {
      module: DocumentsModule,
      imports: [CoreModule, PreparedStatementsModule, EventsModule, QueuesModule],
      providers: [
        { provide: DOCUMENTS_OPTIONS, useValue: { ...DEFAULT_DOCUMENTS_OPTIONS, ...options } },
        { provide: TranslationEngine, inject: [AppConfig], useFactory: createTranslationEngine },
        TranslationQueue,
        DocumentsService,
        DocumentTranslatorService,
        DocumentIntakeService,
      ],
      exports: [DOCUMENTS_OPTIONS, TranslationEngine, TranslationQueue, DocumentsService, DocumentTranslatorService, DocumentIntakeService],
    };
  }
}
