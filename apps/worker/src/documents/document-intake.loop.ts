import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { DOCUMENTS_CHANNEL, DocumentIntake, INTAKE_BATCH_SIZE } from '@app/domain';
import { Client } from 'pg';

/** Without a notification (missed while reconnecting), the loop still looks this often. */
export const INTAKE_POLL_MS = 1000;

/**
 * Queues the documents the api accepted, as the outbox relay loop relays events: it wakes on
 * Postgres NOTIFY (sent when the document's transaction commits) or every second, and drains
 * what awaits the queue (DocumentIntake). While Redis is unreachable it does nothing; the
 * documents wait in Postgres and are queued on the first pass after Redis is back.
 */
@Injectable()
export class DocumentIntakeLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DocumentIntakeLoop.name);
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private woken = false;
  private listener?: Client;
  private reconnect?: NodeJS.Timeout;

  constructor(
    private readonly config: AppConfig,
    private readonly intake: DocumentIntake,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.running = true;
    await this.listen();
    this.loop = this.run();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    clearTimeout(this.reconnect);
    this.poke();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
    this.listener = undefined;
  }

  /** One pass: everything waiting, batch by batch; nothing while Redis is away. */
  async tick(): Promise<number> {
    if (!(await this.intake.reachable())) return 0;
    let total = 0;
    for (;;) {
      const n = await this.intake.intakeBatch(INTAKE_BATCH_SIZE);
      total += n;
      if (n < INTAKE_BATCH_SIZE || !this.running) return total;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.tick();
      } catch (err) {
        this.logger.warn(`document intake pass failed (the documents wait for the next one): ${(err as Error).message}`);
      }
      await this.sleep(INTAKE_POLL_MS);
    }
  }

  private sleep(ms: number): Promise<void> {
    if (this.woken || !this.running) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        this.woken = false;
        resolve();
      };
    });
  }

  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  /** A dedicated connection for LISTEN; reconnects on loss (polling meanwhile). */
  private async listen(): Promise<void> {
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'worker-document-intake' });
    client.on('notification', () => this.poke());
    const lost = (why: string) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (!this.running) return;
      this.logger.warn(`document intake listener lost (${why}); polling every ${INTAKE_POLL_MS} ms until it is back`);
      this.reconnect = setTimeout(() => void this.listen(), INTAKE_POLL_MS);
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    try {
      await client.connect();
      await client.query(`LISTEN ${DOCUMENTS_CHANNEL}`);
      this.listener = client;
      this.poke();
    } catch (err) {
      await client.end().catch(() => undefined);
      if (this.running) {
        this.logger.warn(`document intake listener not connected (${(err as Error).message}); retrying`);
        this.reconnect = setTimeout(() => void this.listen(), INTAKE_POLL_MS);
      }
    }
  }
}
