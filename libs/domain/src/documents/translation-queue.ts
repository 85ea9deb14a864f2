import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { QUEUES, TRANSLATION_JOBS, TranslationJob } from '@app/queue';
import { Queue } from 'bullmq';
import { DEFAULT_DOCUMENTS_OPTIONS, DOCUMENTS_OPTIONS, DocumentsOptions } from './documents.options';

// The names live beside the schedules table (libs/queue); exported here too for existing importers.
export { TRANSLATION_JOBS };

/**
 * One job per document. The creation time is part of it so that a database whose ids start over
 * (restored, recreated) never meets the job of an older document with the same id still kept in
 * Redis; the prefix because BullMQ refuses ids that look like integers.
 */
export const translationJobId = (documentId: string, createdAt: Date): string => `document-${documentId}-${createdAt.getTime()}`;

/** Puts documents on the translations queue, with the retry policy. */
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
    const { attempts, backoffMs } = this.retry;
    await this.queue.addBulk(
      documents.map((d) => ({
        name: TRANSLATION_JOBS.translate,
        data: { documentId: d.id },
        opts: {
          jobId: translationJobId(d.id, d.createdAt),
          attempts,
          backoff: { type: 'exponential' as const, delay: backoffMs },
          removeOnComplete: { age: 3600, count: 10_000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      })),
    );
  }

  /** Whether Redis is reachable now (BullMQ would otherwise wait for it, however long). */
  async reachable(): Promise<boolean> {
    return (await this.queue.backend.client).status === 'ready';
  }
}
