import { Inject, Injectable, Logger } from '@nestjs/common';
import { PreparedStatements, TransactionHost } from '@kernel/database';
import { Outbox } from '@kernel/events';
import { currentTraceContext } from '@kernel/telemetry';
import { randomUUID } from 'node:crypto';
import { MicroBatch } from '@kernel/core';
import { DEFAULT_DOCUMENTS_OPTIONS, DOCUMENTS_OPTIONS, DocumentsOptions } from './model/documents.options';
import { TranslationEngine, TranslationEngineError } from './engines/translation-engine';
import { DocumentContentError, DocumentFormat } from './model/formats/document-format';
import { FORMAT_HANDLERS } from './model/formats/format-handlers';
import { translateUnits } from './model/segmentation';
import { TranslationQueue } from './translation-queue';

export type TranslationOutcome = 'translated' | 'failed' | 'skipped';

interface Claimed {
  id: string;
  organisation_id: string;
  case_id: string;
  format: DocumentFormat;
  source_language: string | null;
  target_language: string;
  original: Buffer;
}

const MAX_REASON = 1000;
/** A translation up to this size is stored in a batch with others; a larger one alone. */
export const BATCHED_TRANSLATION_MAX_BYTES = 64 * 1024;
const CLAIMED_COLUMNS = 'id, organisation_id, case_id, format, source_language, target_language, original';
export const ABANDONED_REASON = 'The translation was interrupted and did not finish within an hour; send the document again.';

/**
 * The worker's side of a document: translate it through the configured engine, store the
 * translation and write `document.translated` in the same statement. Safe to run twice for
 * one document: only the run that moves it from `translating` to `translated` stores and emits.
 * The claims, and the stores, of the jobs running at the same moment go to Postgres together, one
 * statement for all of them (MicroBatch): each is its own row's change, as if made alone.
 */
/** Claims (and stores) of the jobs running at one moment go to Postgres together, at most this many per statement. */
const BATCH_MAX = 50;

@Injectable()
export class DocumentTranslatorService {
  private readonly logger = new Logger(DocumentTranslatorService.name);
  private readonly claims = new MicroBatch<string, Claimed | null>((ids) => this.claimMany(ids), BATCH_MAX);
  private readonly stores = new MicroBatch<{ doc: Claimed; translation: Buffer; trace: ReturnType<typeof currentTraceContext> }, boolean>(
    (items) => this.storeMany(items),
    BATCH_MAX,
  );

  constructor(
    private readonly tx: TransactionHost,
    private readonly statements: PreparedStatements,
    private readonly outbox: Outbox,
    private readonly engine: TranslationEngine,
    private readonly queue: TranslationQueue,
    @Inject(DOCUMENTS_OPTIONS) private readonly options: DocumentsOptions,
  ) {}

  /**
   * One attempt. An engine failure worth retrying is thrown (the queue retries it with backoff)
   * unless this is the last attempt; a permanent failure, or the last attempt's, marks the
   * document failed with the reason.
   */
  async translate(documentId: string, attempt: { last: boolean }): Promise<TranslationOutcome> {
    const doc = await this.claim(documentId);
    if (!doc) return 'skipped';
    let translation: Buffer;
    try {
      const handler = FORMAT_HANDLERS[doc.format];
      const opened = await handler.open(doc.original);
      const translated = await translateUnits(opened.units, this.engine, { source: doc.source_language, target: doc.target_language });
      translation = await opened.rebuild(translated);
    } catch (err) {
      const { reason, permanent } = this.classify(err);
      if (!permanent && !attempt.last) throw err;
      await this.fail(doc.id, reason);
      return 'failed';
    }
    return (await this.store(doc, translation)) ? 'translated' : 'skipped';
  }

  /**
   * The sweep for lost work: documents left `queued` longer than requeueAfterMs (their job never
   * reached Redis) are queued again; documents left `translating` for an hour (their job died
   * with a worker more often than BullMQ's stalled-job recovery allows) are failed with a reason
   * that says to send them again, rather than left in progress for ever.
   */
  async sweepStale(): Promise<{ requeued: number; abandoned: number }> {
    const rows: Array<{ id: string; created_at: Date }> = await this.tx.manager.query(
      `SELECT id, created_at FROM documents WHERE state = 'queued' AND created_at < now() - $1::int * interval '1 millisecond' ORDER BY created_at LIMIT 1000`,
      [this.options.requeueAfterMs ?? DEFAULT_DOCUMENTS_OPTIONS.requeueAfterMs],
    );
    for (const row of rows) await this.queue.enqueue({ id: String(row.id), createdAt: row.created_at });
    const [, abandoned]: [unknown, number] = await this.tx.manager.query(
      `UPDATE documents SET state = 'failed', failure_reason = $1, updated_at = now()
       WHERE state = 'translating' AND updated_at < now() - interval '1 hour'`,
      [ABANDONED_REASON],
    );
    return { requeued: rows.length, abandoned };
  }

  /** Batched with the claims of other jobs of this moment, unless inside a transaction (which a batch must not join). */
  private async claim(documentId: string): Promise<Claimed | null> {
    if (this.tx.inTransaction) return (await this.claimMany([documentId]))[0];
    return this.claims.push(documentId);
  }

  private async claimMany(documentIds: string[]): Promise<Array<Claimed | null>> {
    const rows = await this.statements.query<Claimed>(
      'documents-claim',
      `UPDATE documents SET state = 'translating', attempts = attempts + 1, updated_at = now()
       WHERE id = ANY($1::bigint[]) AND state IN ('queued', 'translating')
       RETURNING ${CLAIMED_COLUMNS}`,
      [documentIds],
    );
    const byId = new Map(rows.map((r) => [String(r.id), r]));
    return documentIds.map((id) => byId.get(String(id)) ?? null);
  }

  /**
   * The translation and its `document.translated` event, in one statement: both or neither. Batched
   * as claims are, but for a large translation (a batch sends its translations as hex text) and
   * inside a transaction: then alone, the translation as a binary parameter.
   */
  private async store(doc: Claimed, translation: Buffer): Promise<boolean> {
    if (translation.length <= BATCHED_TRANSLATION_MAX_BYTES && !this.tx.inTransaction) {
      return this.stores.push({ doc, translation, trace: currentTraceContext() });
    }
    return this.outbox.emitIfChanged(
      this.tx.manager,
      `UPDATE documents SET state = 'translated', translated = $2, translated_bytes = $3, translated_at = now(), updated_at = now()
       WHERE id = $1 AND state = 'translating' RETURNING id`,
      [doc.id, translation, translation.length],
      String(doc.organisation_id),
      'document.translated',
      { document_id: String(doc.id), case_id: String(doc.case_id), language: doc.target_language },
    );
  }

  /** Each row moved from `translating` to `translated` (and only those) gets its event, with the trace context of its own job. */
  private async storeMany(items: Array<{ doc: Claimed; translation: Buffer; trace: ReturnType<typeof currentTraceContext> }>): Promise<boolean[]> {
    const { text, values } = this.outbox.forEachChanged(
      `WITH input AS (
         SELECT * FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[]) AS i (id, translated, traceparent, tracestate)
       )
       UPDATE documents d SET state = 'translated', translated = i.translated, translated_bytes = octet_length(i.translated), translated_at = now(), updated_at = now()
       FROM input i WHERE d.id = i.id AND d.state = 'translating'
       RETURNING d.organisation_id,
                 jsonb_build_object('document_id', d.id::text, 'case_id', d.case_id::text, 'language', d.target_language) AS data,
                 i.traceparent, i.tracestate`,
      [items.map((i) => i.doc.id), items.map((i) => i.translation), items.map((i) => i.trace.traceparent), items.map((i) => i.trace.tracestate)],
      'document.translated',
    );
    const stored = (await this.statements.query<{ data: { document_id: string } }>('documents-store', text, values)).map((r) => r.data);
    const done = new Set(stored.map((d) => d.document_id));
    return items.map((i) => done.has(String(i.doc.id)));
  }

  private async fail(documentId: string, reason: string): Promise<void> {
    await this.tx.manager.query(`UPDATE documents SET state = 'failed', failure_reason = $2, updated_at = now() WHERE id = $1 AND state = 'translating'`, [
      documentId,
      reason.slice(0, MAX_REASON),
    ]);
  }

  /** What the caller is told, and whether another attempt could help. */
  private classify(err: unknown): { reason: string; permanent: boolean } {
    if (err instanceof TranslationEngineError) return { reason: err.message, permanent: err.permanent };
    if (err instanceof DocumentContentError) return { reason: err.message, permanent: true };
    const errorId = randomUUID();
    this.logger.error({ err, errorId }, `translation failed unexpectedly (error id ${errorId}): ${(err as Error)?.message}`);
    return { reason: `The translation failed because of an error on our side (error id ${errorId}).`, permanent: false };
  }
}
