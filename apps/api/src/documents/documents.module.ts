import { DynamicModule, Module } from '@nestjs/common';
import { IdempotencyModule } from '@app/idempotency';
import { DocumentsDomainModule, DocumentsOptions } from '@app/domain';
import { DocumentsController } from './documents.controller';
import { MultipartUploadGuard } from './multipart-upload.guard';

/** REST edge of documents: POST /v1/documents (JSON or multipart) and GET /v1/documents/{id}. */
@Module({})
export class DocumentsModule {
  /** `options` tune the retry policy (tests); the defaults are the production ones. */
  static forRoot(options: DocumentsOptions = {}): DynamicModule {
    return {
      module: DocumentsModule,
      imports: [DocumentsDomainModule.forRoot(options), IdempotencyModule],
      controllers: [DocumentsController],
      providers: [MultipartUploadGuard],
    };
  }
}
