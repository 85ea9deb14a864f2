import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { QUEUES } from '@app/queue';
import { Queue } from 'bullmq';
// Until libs/domain/src/index.ts exports the documents folder: then '@app/domain'.
import { TRANSLATION_JOBS } from '@app/domain';

const MINUTE_MS = 60_000;

/**
 * The api queues a document's job after its transaction commits; if Redis was unreachable at
 * that moment the job is lost and the document would stay `queued`. This sweep (every minute,
 * one schedule whatever the number of replicas) queues such documents again, and fails those
 * whose translation was interrupted for good (see DocumentTranslator.sweepStale).
 */
@Injectable()
export class TranslationScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger(TranslationScheduler.name);

  constructor(@InjectQueue(QUEUES.translations) private readonly queue: Queue) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.upsertJobScheduler(
      TRANSLATION_JOBS.requeueStale,
      { every: MINUTE_MS },
      { name: TRANSLATION_JOBS.requeueStale, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
    );
    this.logger.log(`scheduled ${TRANSLATION_JOBS.requeueStale} every minute`);
  }
}
