import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { TEXT_INPUT_FORMATS, type TextInputFormat } from '../../documents.service';
import { NOT_BLANK, ID_SCHEMA_PATTERN, IsIdOf } from '@web/http';

const CASE_DOC = 'The case to send the document in: an open case of this organisation (422 `validation_failed` naming `case_id` otherwise).';
const TARGET_DOC = 'BCP 47 tag of the language to translate into, e.g. `es`, `pt-BR`, `zh-Hant`; it must be a supported language (see the API description).';
const SOURCE_DOC =
  "BCP 47 tag of the original's language. Optional: LibreTranslate and DeepL detect it when left out; Apertium needs it (then 422 `validation_failed` when missing).";

/** The fields shared by both request shapes. */
class DocumentCreateFields {
  @ApiProperty({ pattern: ID_SCHEMA_PATTERN, example: '42', description: CASE_DOC })
  @IsIdOf('case_id', 'case')
  case_id: string;

  @ApiProperty({ maxLength: 35, example: 'es', description: TARGET_DOC })
  @IsString()
  @IsNotEmpty()
  @MaxLength(35)
  target_language: string;

  @ApiPropertyOptional({ maxLength: 35, example: 'en', description: SOURCE_DOC })
  @IsOptional()
  @IsString()
  @MaxLength(35)
  source_language?: string;
}

/** DocumentCreateText (application/json): a piece of text to translate. */
export class DocumentCreateTextDto extends DocumentCreateFields {
  @ApiProperty({
    minLength: 1,
    pattern: NOT_BLANK,
    example: 'Hello, how are you?',
    description: 'The text, at most DOCUMENT_MAX_TEXT_CHARS characters (default 100,000; 413 `text_too_long` beyond). Not blank.',
  })
  @IsString()
  @IsNotEmpty()
  text: string;

  @ApiPropertyOptional({
    enum: TEXT_INPUT_FORMATS,
    default: 'text',
    description: 'How to read the text: plain text (default), Markdown (structure kept) or HTML (markup kept). The translation comes back in the same format.',
  })
  @IsOptional()
  @IsIn([...TEXT_INPUT_FORMATS], { message: `format must be one of: ${TEXT_INPUT_FORMATS.join(', ')}` })
  format?: TextInputFormat;
}

/** DocumentCreateForm (multipart/form-data): a file to translate, with the fields as form fields. */
export class DocumentCreateFormDto extends DocumentCreateFields {
  // Documentation only: the file is read from the stream, never validated as a field.
  @ApiProperty({
    type: 'string',
    format: 'binary',
    description:
      'Exactly one file part named `file`, at most DOCUMENT_MAX_FILE_BYTES (default 10 MB; 413 `file_too_large`, refused while it streams). ' +
      'Supported: plain text (.txt), Markdown (.md, .markdown), HTML (.html, .htm), all UTF-8, and Word .docx. The format is decided by the content ' +
      '(zip magic bytes and package content types for .docx, valid UTF-8 for text) and the file name, never by the declared type alone; anything else answers 415 `file_type_not_supported`.',
  })
  file: unknown;
}
