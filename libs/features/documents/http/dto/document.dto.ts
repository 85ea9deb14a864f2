import { ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { DOCUMENT_FORMATS, type DocumentFormat } from '../../model/formats/document-format';
import { DOCUMENT_STATES, type DocumentState } from '../../model/document.record';
import { ID_SCHEMA_PATTERN } from '@web/http';

/** The translation of a document, inline, in the format of the original. */
export class DocumentTranslationDto {
  @ApiProperty({ example: 'es', description: "BCP 47 tag of the language translated into (the document's `target_language`)." })
  language: string;

  @ApiProperty({
    example: 'text/plain',
    description: "Media type of the translation: the same as the original's (`text/plain`, `text/markdown`, `text/html`, all UTF-8, or the .docx type).",
  })
  media_type: string;

  @ApiProperty({
    enum: ['utf-8', 'base64'],
    description: "How `content` carries the translation: the text itself (`utf-8`) for text formats, base64 of the file's bytes for .docx.",
  })
  encoding: 'utf-8' | 'base64';

  @ApiProperty({ example: 'Hola, ¿cómo está?', description: 'The translation: text inline, or the base64 of a .docx file that opens in Word and LibreOffice.' })
  content: string;

  @ApiProperty({ type: 'integer', minimum: 0, example: 18, description: 'Size of the translation in bytes (UTF-8 text, or the .docx file).' })
  size_bytes: number;
}

/**
 * A document sent in a case for translation. `state` moves queued → translating → translated
 * (or failed, with `failure_reason`); `translation` is set once translated.
 */
export class DocumentDto {
  @ApiProperty({ example: '31', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: '42', pattern: ID_SCHEMA_PATTERN, description: 'The case the document was sent in.' })
  case_id: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'letter.docx', description: "The file's name as sent (base name only); null for text sent as JSON." })
  name: string | null;

  @ApiProperty({
    example: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    description: 'Media type of the original as recognised from its content and name (never from the declared type alone).',
  })
  media_type: string;

  @ApiProperty({ enum: DOCUMENT_FORMATS, example: 'docx', description: 'Format of the original, and of the translation.' })
  format: DocumentFormat;

  @ApiProperty({ type: 'integer', minimum: 1, example: 18342, description: 'Size of the original in bytes (UTF-8 for text sent as JSON).' })
  size_bytes: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'en',
    description: "BCP 47 tag of the original's language, as sent (canonical form); null when the engine detects it.",
  })
  source_language: string | null;

  @ApiProperty({ example: 'es', description: 'BCP 47 tag of the language to translate into (canonical form).' })
  target_language: string;

  @ApiProperty({
    enum: DOCUMENT_STATES,
    example: 'queued',
    description: '`queued` when sent, `translating` while the worker has it (also between retries of a failing engine), then `translated` or `failed`.',
  })
  state: DocumentState;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: null,
    description:
      "Why the document could not be translated (the engine's refusal, an unsupported language pair, no engine configured); null unless `state` is `failed`.",
  })
  failure_reason: string | null;

  // oneOf written out: swagger's `type + nullable` form comes out as `allOf` + `type: [object, null]`, which refuses null.
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(DocumentTranslationDto) }, { type: 'null' }],
    description: 'The translation, once `state` is `translated`; null before and when failed.',
  })
  translation: DocumentTranslationDto | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:04.120Z', description: 'Last change of state.' })
  updated_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: null, description: 'When the translation was stored; null until then.' })
  translated_at: string | null;
}
