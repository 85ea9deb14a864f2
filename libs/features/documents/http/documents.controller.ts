import { Controller, Get, HttpCode, Param, Post, Type, UseGuards } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { ApiValidationPipe, DigitsIdPipe, ApiData, ApiErrors, ApiIdParam } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { DocumentsService } from '../documents.service';
import { presentDocument } from './document.presenter';
import { DocumentCreateFormDto, DocumentCreateTextDto } from './dto/document-create.dto';
import { DocumentDto, DocumentTranslationDto } from './dto/document.dto';
import type { UploadedDocument } from './multipart-upload';
import { DocumentInput, MultipartUploadGuard, uploadFingerprint } from './multipart-upload.guard';

const validation = new ApiValidationPipe();
/** The body checked against the DTO of the shape it came in (422 validation_failed naming the field). */
const validate = <T>(dto: Type<T>, body: unknown): Promise<T> => validation.transform(body, { type: 'body', metatype: dto }) as Promise<T>;

@ApiTags('Documents')
@ApiExtraModels(DocumentCreateTextDto, DocumentCreateFormDto, DocumentTranslationDto)
@Controller('v1/documents')
export class DocumentsController {
  constructor(private readonly documents: DocumentsService) {}

  @Post()
  @HttpCode(202)
  @RequireScopes('documents:write')
  @UseGuards(MultipartUploadGuard)
  @Idempotent({ fingerprintExtra: uploadFingerprint })
  @ApiOperation({
    operationId: 'createDocument',
    summary: 'Send a document or a text in a case for translation',
    description:
      'Scope `documents:write`. IK (a repeat must carry the same file, byte for byte). Either `multipart/form-data` (DocumentCreateForm: one file ' +
      'plus the fields) or `application/json` (DocumentCreateText). Answers 202 at once with the document `queued` (even while the ' +
      "service's queue is unreachable: the document is stored and queued when it is back); the worker translates it " +
      'through the configured engine, and `GET /v1/documents/{id}` then carries the translation (the `document.translated` event says when). ' +
      'Refusals: 413 `file_too_large` (over DOCUMENT_MAX_FILE_BYTES, default 10 MB, refused while streaming), 413 `text_too_long` (over ' +
      'DOCUMENT_MAX_TEXT_CHARS, default 100,000 characters, or a JSON body too large to read), 415 `file_type_not_supported`, 422 ' +
      '`validation_failed` for an unknown or closed case, a missing, malformed or unsupported language, an empty text, or a multipart body ' +
      'without exactly one file.',
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: { $ref: getSchemaPath(DocumentCreateTextDto) } },
        'multipart/form-data': { schema: { $ref: getSchemaPath(DocumentCreateFormDto) } },
      },
    },
  })
  @ApiData(DocumentDto, { status: 202, description: 'Accepted: the document is queued for translation.' })
  @ApiErrors('idempotency_key_in_use', 'file_too_large', 'text_too_long', 'file_type_not_supported', 'validation_failed', 'idempotency_key_reused')
  async create(@CurrentPrincipal() p: Principal, @DocumentInput() input: { body: unknown; upload: UploadedDocument | null }): Promise<{ data: DocumentDto }> {
    const { body, upload } = input;
    const fields = upload ? await validate(DocumentCreateFormDto, body) : await validate(DocumentCreateTextDto, body);
    const content = upload
      ? { kind: 'file' as const, file: upload.file, name: upload.name, declaredType: upload.declaredType }
      : { kind: 'text' as const, text: (fields as DocumentCreateTextDto).text, format: (fields as DocumentCreateTextDto).format };
    const created = await this.documents.create(p.organisationId, p.connectionId, {
      caseId: fields.case_id,
      targetLanguage: fields.target_language,
      sourceLanguage: fields.source_language,
      content,
    });
    return { data: presentDocument(created) };
  }

  @Get(':id')
  @RequireScopes('documents:read')
  @ApiIdParam('document')
  @ApiOperation({
    operationId: 'getDocument',
    summary: 'Get a document, with its translation once done',
    description:
      "Scope `documents:read`. The document's case, languages, name, type and state, and once `translated` its translation inline in the " +
      "original's format (text as text, .docx as base64). A failed document carries `failure_reason`. A document of another organisation answers 404.",
  })
  @ApiData(DocumentDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<{ data: DocumentDto }> {
    return { data: presentDocument(await this.documents.get(p.organisationId, id)) };
  }
}
