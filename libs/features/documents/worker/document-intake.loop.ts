import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { CHANNELS, NotifiedLoop } from '@kernel/database';
import { DocumentIntakeService, INTAKE_BATCH_SIZE } from '../document-intake.service';

/** Without a notification (missed while reconnecting), the loop still looks this often. */
export const INTAKE_POLL_MS = 1000;

/**
 * Queues the documents the api accepted, as the outbox relay loop relays events: it wakes on
 * Postgres NOTIFY (sent when the document's transaction commits) or every second, and drains
 * what awaits the queue (DocumentIntakeService). While Redis is unreachable it does nothing; the
 * documents wait in Postgres and are queued on the first pass after Redis is back.
 */
@Injectable()
export class DocumentIntakeLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DocumentIntakeLoop.name);
  private readonly loop: NotifiedLoop;

  constructor(
    config: AppConfig,
    private readonly intake: DocumentIntakeService,
  ) {
    this.loop = new NotifiedLoop({
      name: 'document-intake',
      databaseUrl: config.databaseDirectUrl, // LISTEN needs a session: never through a pooler
      channels: [CHANNELS.documentsAwaitingQueue],
      pollMs: INTAKE_POLL_MS,
      pass: () => this.tick(),
      logger: this.logger,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** One pass: everything waiting, batch by batch; nothing while Redis is away. */
  async tick(): Promise<number> {
    if (!(await this.intake.reachable())) return 0;
    let total = 0;
    for (;;) {
      const n = await this.intake.intakeBatch(INTAKE_BATCH_SIZE);
      total += n;
      if (n < INTAKE_BATCH_SIZE || !this.loop.isRunning) return total;
    }
  }
}
