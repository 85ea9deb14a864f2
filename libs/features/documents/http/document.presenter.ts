import { type DocumentRecord } from '../model/document.record';
import { isTextFormat } from '../model/formats/document-format';
import type { DocumentDto } from './dto/document.dto';

/** A document as the wire shows it; the translation inline once done (text as text, .docx as base64). */
export function presentDocument(d: DocumentRecord): DocumentDto {
  const text = isTextFormat(d.format);
  return {
    id: d.id,
    case_id: d.caseId,
    name: d.name,
    media_type: d.mediaType,
    format: d.format,
    size_bytes: d.sizeBytes,
    source_language: d.sourceLanguage,
    target_language: d.targetLanguage,
    state: d.state,
    failure_reason: d.failureReason,
    translation:
      d.state === 'translated' && d.translation
        ? {
            language: d.targetLanguage,
            media_type: d.mediaType,
            encoding: text ? 'utf-8' : 'base64',
            content: d.translation.toString(text ? 'utf8' : 'base64'),
            size_bytes: d.translation.length,
          }
        : null,
    created_at: d.createdAt.toISOString(),
    updated_at: d.updatedAt.toISOString(),
    translated_at: d.translatedAt?.toISOString() ?? null,
  };
}
