import { DynamicModule, Module } from '@nestjs/common';
import { IdempotencyModule } from '@web/idempotency';
import { DocumentsModule } from '../documents.module';
import { DocumentsOptions } from '../model/documents.options';
import { DocumentsController } from './documents.controller';
import { MultipartUploadGuard } from './multipart-upload.guard';

/** REST edge of documents: POST /v1/documents (JSON or multipart) and GET /v1/documents/{id}. */
@Module({})
export class DocumentsHttpModule {
  /** `options` tune the retry policy (tests); the defaults are the production ones. */
  static forRoot(options: DocumentsOptions = {}): DynamicModule {
    return {
      module: DocumentsHttpModule,
      imports: [DocumentsModule.forRoot(options), IdempotencyModule],
      controllers: [DocumentsController],
      providers: [MultipartUploadGuard],
    };
  }
}
