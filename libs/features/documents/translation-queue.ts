import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { QUEUES, TRANSLATION_JOBS, TranslationJob, translationJobOptions } from '@kernel/queue';
import { Queue } from 'bullmq';
import { DEFAULT_DOCUMENTS_OPTIONS, DOCUMENTS_OPTIONS, DocumentsOptions } from './model/documents.options';

/** The translations queue's one producer: puts documents on it, with the documents' retry policy (names and options: libs/queue). */
@Injectable()
export class TranslationQueue {
  constructor(
    @InjectQueue(QUEUES.translations) private readonly queue: Queue<TranslationJob>,
    // Read at each use, not copied: tests tune the policy of a running application.
    @Inject(DOCUMENTS_OPTIONS) private readonly options: DocumentsOptions,
  ) {}

  private get retry(): NonNullable<DocumentsOptions['retry']> {
    return this.options.retry ?? DEFAULT_DOCUMENTS_OPTIONS.retry;
  }

  /** Adding a document whose job is still known to the queue does nothing (same job id). */
  async enqueue(document: { id: string; createdAt: Date }): Promise<void> {
    await this.enqueueMany([document]);
  }

  async enqueueMany(documents: Array<{ id: string; createdAt: Date }>): Promise<void> {
    if (documents.length === 0) return;
    const retry = this.retry;
    await this.queue.addBulk(
      documents.map((d) => ({ name: TRANSLATION_JOBS.translate, data: { documentId: d.id }, opts: translationJobOptions(d.id, d.createdAt, retry) })),
    );
  }

  /** Whether Redis is reachable now (BullMQ would otherwise wait for it, however long). */
  async reachable(): Promise<boolean> {
    return (await this.queue.backend.client).status === 'ready';
  }
}
