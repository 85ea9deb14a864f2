import { Module } from '@nestjs/common';
import { DocsController } from './docs.controller';
import { OpenApiController } from './openapi.controller';
import { OpenApiDocument } from './openapi-document';

@Module({ controllers: [OpenApiController, DocsController], providers: [OpenApiDocument], exports: [OpenApiDocument] })
export class OpenApiModule {}
