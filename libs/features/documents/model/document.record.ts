import { DocumentFormat } from './formats/document-format';

export const DOCUMENT_STATES = ['queued', 'translating', 'translated', 'failed'] as const;
export type DocumentState = (typeof DOCUMENT_STATES)[number];

/** A document as the domain hands it out (its original content is not loaded). */
export interface DocumentRecord {
  id: string;
  organisationId: string;
  caseId: string;
  /** File name as sent; null for text sent as JSON. */
  name: string | null;
  mediaType: string;
  format: DocumentFormat;
  sizeBytes: number;
  sourceLanguage: string | null;
  targetLanguage: string;
  state: DocumentState;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
  translatedAt: Date | null;
  /** The translation, in the original's format; set once translated. */
  translation: Buffer | null;
}

/** Columns of a DocumentRecord, for `SELECT ${DOCUMENT_COLUMNS} FROM documents d`. */
export const DOCUMENT_COLUMNS = `d.id, d.organisation_id, d.case_id, d.name, d.media_type, d.format, d.original_bytes, d.source_language,
  d.target_language, d.state, d.failure_reason, d.created_at, d.updated_at, d.translated_at, d.translated`;

export interface DocumentRow {
  id: string;
  organisation_id: string;
  case_id: string;
  name: string | null;
  media_type: string;
  format: DocumentFormat;
  original_bytes: number;
  source_language: string | null;
  target_language: string;
  state: DocumentState;
  failure_reason: string | null;
  created_at: Date;
  updated_at: Date;
  translated_at: Date | null;
  translated: Buffer | null;
}

export const toDocumentRecord = (r: DocumentRow): DocumentRecord => ({
  id: String(r.id),
  organisationId: String(r.organisation_id),
  caseId: String(r.case_id),
  name: r.name,
  mediaType: r.media_type,
  format: r.format,
  sizeBytes: r.original_bytes,
  sourceLanguage: r.source_language,
  targetLanguage: r.target_language,
  state: r.state,
  failureReason: r.failure_reason,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  translatedAt: r.translated_at,
  translation: r.translated,
});
