import { Processor, WorkerHost } from '@nestjs/bullmq';
import { BeforeApplicationShutdown, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Metrics, METRICS } from '@kernel/metrics';
import { QUEUES, TRANSLATION_JOBS, TranslationJob, superviseWorker } from '@kernel/queue';
import { Job, UnrecoverableError } from 'bullmq';
import { DocumentTranslatorService, TranslationOutcome } from '../document-translator.service';
import type { Counter, Histogram } from 'prom-client';

/**
 * Translations queue: one job per document (retried with exponential backoff while the engine
 * fails in a way worth retrying), and the scheduled sweep for documents whose job was lost.
 */
@Processor(QUEUES.translations)
export class TranslationProcessor extends WorkerHost implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly jobs: Counter<'outcome'>;
  private readonly duration: Histogram<'outcome'>;

  constructor(
    private readonly translator: DocumentTranslatorService,
    private readonly config: AppConfig,
    metrics: Metrics,
  ) {
    super();
    this.jobs = metrics.counter(METRICS.translationJobs);
    this.duration = metrics.histogram(METRICS.translationJobDuration);
  }

  /** The decorator's options are static; TRANSLATION_CONCURRENCY is known only now. */
  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.translationConcurrency;
    superviseWorker(this.worker, QUEUES.translations);
  }

  async process(job: Job<TranslationJob>): Promise<TranslationOutcome | { requeued: number; abandoned: number }> {
    switch (job.name) {
      case TRANSLATION_JOBS.translate:
        return this.translate(job);
      case TRANSLATION_JOBS.requeueStale:
        return this.translator.sweepStale();
      default:
        throw new UnrecoverableError(`unknown translations job "${job.name}"`);
    }
  }

  /** One document's job, counted by outcome (`retried` when it throws for the queue to try again) and timed. */
  private async translate(job: Job<TranslationJob>): Promise<TranslationOutcome> {
    const started = process.hrtime.bigint();
    let outcome: TranslationOutcome | 'retried' = 'retried';
    try {
      outcome = await this.translator.translate(job.data.documentId, { last: job.attemptsMade + 1 >= (job.opts.attempts ?? 1) });
      return outcome;
    } finally {
      this.jobs.inc({ outcome });
      this.duration.observe({ outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  /** Close before TypeORM's DataSource goes (see MaintenanceProcessor): a job in flight finishes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }
}
