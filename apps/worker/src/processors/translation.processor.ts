import { Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { QUEUES, TRANSLATION_JOBS, TranslationJob, superviseWorker } from '@app/queue';
import { Job, UnrecoverableError } from 'bullmq';
import { DocumentTranslatorService, TranslationOutcome } from '@app/domain';

/**
 * Translations queue: one job per document (retried with exponential backoff while the engine
 * fails in a way worth retrying), and the scheduled sweep for documents whose job was lost.
 */
@Processor(QUEUES.translations)
export class TranslationProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    private readonly translator: DocumentTranslatorService,
    private readonly config: AppConfig,
  ) {
    super();
  }

  /** The decorator's options are static; TRANSLATION_CONCURRENCY is known only now. */
  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.translationConcurrency;
    superviseWorker(this.worker, QUEUES.translations);
  }

  async process(job: Job<TranslationJob>): Promise<TranslationOutcome | { requeued: number; abandoned: number }> {
    switch (job.name) {
      case TRANSLATION_JOBS.translate:
        return this.translator.translate(job.data.documentId, { last: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) });
      case TRANSLATION_JOBS.requeueStale:
        return this.translator.sweepStale();
      default:
        throw new UnrecoverableError(`unknown translations job "${job.name}"`);
    }
  }

  /** Close before TypeORM's DataSource goes (see MaintenanceProcessor): a job in flight finishes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
