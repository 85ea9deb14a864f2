import { Injectable } from '@nestjs/common';
import { CHANNELS, TransactionHost } from '@kernel/database';
import { AppConfig } from '@kernel/config';
import type { PoolClient } from 'pg';
import { EntityManager } from 'typeorm';
import { isId, notFound, validationFailed } from '@kernel/core';
import { DocumentFile, documentFileFromBuffer } from './model/document-file';
import { DOCUMENT_COLUMNS, DocumentRecord, DocumentRow, toDocumentRecord } from './model/document.record';
import { fileTooLarge, fileTypeNotSupported, textTooLong } from './model/documents.errors';
import { TranslationEngine } from './engines/translation-engine';
import { DocumentFormat, MEDIA_TYPES } from './model/formats/document-format';
import { checkLanguage } from './model/languages';
import { copyOriginalChunks } from './original-copy';
import { sniffFormat } from './model/sniff';

/** Formats text sent as JSON may declare (DOCX is a file). */
export const TEXT_INPUT_FORMATS = ['text', 'markdown', 'html'] as const;
export type TextInputFormat = (typeof TEXT_INPUT_FORMATS)[number];

export type DocumentContentInput =
  { kind: 'text'; text: string; format?: TextInputFormat } | { kind: 'file'; file: DocumentFile; name: string | null; declaredType: string | null };

/** An original up to this size goes into its row as one parameter; a larger one in chunks of this size (see storedOriginal). */
export const ORIGINAL_CHUNK_BYTES = 64 * 1024;

export interface CreateDocumentInput {
  caseId: string;
  targetLanguage: string;
  sourceLanguage?: string | null;
  content: DocumentContentInput;
}

/** Characters as people count them (code points), stopping early past `max`. */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let n = 0;
  for (const _ of text) if (++n > max) return true;
  return false;
}

/** A file name as kept: its base name, without control characters, at most 255 characters. */
export function cleanFileName(name: string | null | undefined): string | null {
  const base = (name ?? '')
    .split(/[\\/]/)
    .pop()!
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return base ? Array.from(base).slice(0, 255).join('') : null;
}

/**
 * Documents sent in a case for translation: checks and stores one, marked as awaiting the queue,
 * and notifies the worker, which queues its translation (DocumentIntakeService). Accepting a document
 * needs Postgres only: with Redis away the answer is still 202 at once, and the translation
 * follows when Redis is back (a document whose job is later lost is queued again by the sweep).
 */
@Injectable()
export class DocumentsService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly config: AppConfig,
    private readonly engine: TranslationEngine,
  ) {}

  async create(organisationId: string, connectionId: string | null, input: CreateDocumentInput): Promise<DocumentRecord> {
    const { file, format, name } = await this.readContent(input.content);
    const target = checkLanguage(input.targetLanguage);
    if (!target.ok) throw validationFailed('target_language', target.problem);
    let source: string | null = null;
    if (input.sourceLanguage !== undefined && input.sourceLanguage !== null) {
      const checked = checkLanguage(input.sourceLanguage);
      if (!checked.ok) throw validationFailed('source_language', checked.problem);
      source = checked.tag;
    }
    if (source === null && this.engine.needsSourceLanguage) {
      throw validationFailed('source_language', `is required: the configured translation engine (${this.engine.name}) cannot detect the language`);
    }
    if (source !== null && source === target.tag) throw validationFailed('target_language', 'must differ from source_language');

    return this.tx.run(async (m) => {
      // FOR SHARE: the case cannot be closed until this document is in.
      const found: Array<{ status: string }> = isId(input.caseId)
        ? await m.query(`SELECT status FROM cases WHERE id = $1 AND organisation_id = $2 FOR SHARE`, [input.caseId, organisationId])
        : [];
      if (found.length === 0) throw validationFailed('case_id', 'no such case in this organisation');
      if (found[0].status !== 'open') throw validationFailed('case_id', 'the case is closed');
      const original = await this.storedOriginal(m, file);
      const [row]: DocumentRow[] = await m.query(
        `INSERT INTO documents (organisation_id, case_id, connection_id, source_language, target_language, name, media_type, format,
                                original, original_bytes, original_sha256, awaiting_queue)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, ${original.sql}, $10, $11, true)
         RETURNING ${DOCUMENT_COLUMNS.replace(/d\./g, '')}`,
        [organisationId, input.caseId, connectionId, source, target.tag, name, MEDIA_TYPES[format], format, original.param, file.size, file.sha256],
      );
      await original.done();
      // Delivered to the worker's LISTEN when (and only if) the transaction commits.
      await m.query(`SELECT pg_notify($1, $2)`, [CHANNELS.documentsAwaitingQueue, String(row.id)]);
      return toDocumentRecord(row);
    });
  }

  /** Another organisation's document (or none) answers not_found. */
  async get(organisationId: string, id: string): Promise<DocumentRecord> {
    const rows: DocumentRow[] = isId(id)
      ? await this.tx.manager.query(`SELECT ${DOCUMENT_COLUMNS} FROM documents d WHERE d.id = $1 AND d.organisation_id = $2`, [id, organisationId])
      : [];
    if (rows.length === 0) throw notFound('document');
    return toDocumentRecord(rows[0]);
  }

  /**
   * The original's value in the INSERT (`sql`, parameter $9 being `param`): a small one as it is; a
   * larger one copied chunk by chunk into a large object in this transaction (copyOriginalChunks:
   * each chunk sent to Postgres as read, never copied into a protocol message) and taken from there,
   * so that the api never holds more than one chunk of it; `done` removes the large object once the
   * row holds the bytes.
   */
  private async storedOriginal(m: EntityManager, file: DocumentFile): Promise<{ sql: string; param: unknown; done: () => Promise<void> }> {
    if (file.size <= ORIGINAL_CHUNK_BYTES) return { sql: '$9', param: await file.readAll(), done: async () => undefined };
    const [{ oid }]: Array<{ oid: string }> = await m.query(`SELECT lo_create(0)::text AS oid`);
    const client = (await m.queryRunner!.connect()) as PoolClient;
    const copied = await copyOriginalChunks(client, Number(oid), file.chunks(ORIGINAL_CHUNK_BYTES));
    if (copied !== file.size) throw new Error(`the uploaded file gave ${copied} bytes of ${file.size}`);
    return { sql: 'lo_get($9::oid)', param: oid, done: () => m.query(`SELECT lo_unlink($1::oid)`, [oid]).then(() => undefined) };
  }

  /** The bytes to store, their format and name; the limits and the 415 rule. */
  private async readContent(input: DocumentContentInput): Promise<{ file: DocumentFile; format: DocumentFormat; name: string | null }> {
    if (input.kind === 'text') {
      if (typeof input.text !== 'string' || input.text.trim() === '') throw validationFailed('text', 'must not be empty');
      if (longerThan(input.text, this.config.documentMaxTextChars)) throw textTooLong(this.config.documentMaxTextChars);
      return { file: documentFileFromBuffer(Buffer.from(input.text, 'utf8')), format: input.format ?? 'text', name: null };
    }
    if (input.file.size === 0) throw validationFailed('file', 'is empty');
    if (input.file.size > this.config.documentMaxFileBytes) throw fileTooLarge(this.config.documentMaxFileBytes);
    const name = cleanFileName(input.name);
    const sniffed = await sniffFormat(input.file, name, input.declaredType);
    if (!sniffed.ok) throw fileTypeNotSupported(sniffed.reason);
    return { file: input.file, format: sniffed.format, name };
  }
}
