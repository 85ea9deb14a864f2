import { Logger } from '@nestjs/common';
import { Client, Notification } from 'pg';

export interface NotifiedLoopOptions {
  /** Names the loop in logs and in Postgres' `application_name`. */
  name: string;
  /** A direct connection (DATABASE_DIRECT_URL): through a transaction-mode pooler a LISTEN is never heard. */
  databaseUrl: string;
  /** Channels to LISTEN on; a notification on any of them starts a pass at once. */
  channels: readonly string[];
  /** Without a notification (missed while reconnecting), a pass still runs this often. */
  pollMs: number;
  /** One pass; an error is logged and the next pass comes as usual. */
  pass: () => Promise<unknown>;
  /** Sees each notification before the pass it starts (e.g. to note its payload). */
  onNotification?: (n: Notification) => void;
  logger: Logger;
}

/**
 * A worker loop that wakes on Postgres NOTIFY (sent when the writer's transaction commits) or
 * every `pollMs`, whichever comes first, and runs one pass at a time. It LISTENs on a dedicated
 * connection (a pooled one would be handed to queries) and reconnects on loss, polling meanwhile;
 * after each (re)connection it runs a pass, since anything written while nobody listened is only
 * found by looking. Used by the outbox relay and the document intake.
 */
export class NotifiedLoop {
  private running = false;
  private loop?: Promise<void>;
  private woken = false;
  private wake?: () => void;
  private listener?: Client;
  private reconnect?: NodeJS.Timeout;

  constructor(private readonly options: NotifiedLoopOptions) {}

  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    this.running = true;
    await this.listen();
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.reconnect);
    this.poke();
    await this.loop;
    await this.listener?.end().catch(() => undefined);
    this.listener = undefined;
  }

  /** Starts the next pass now (or right after the one under way). */
  poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    const { name, pollMs, pass, logger } = this.options;
    while (this.running) {
      try {
        await pass();
      } catch (err) {
        logger.error(`${name} pass failed (what it had to do waits for the next one): ${(err as Error).message}`);
      }
      await this.sleep(pollMs);
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

  private async listen(): Promise<void> {
    const { name, databaseUrl, channels, pollMs, onNotification, logger } = this.options;
    const client = new Client({ connectionString: databaseUrl, application_name: `worker-${name}` });
    client.on('notification', (n) => {
      onNotification?.(n);
      this.poke();
    });
    const retry = () => {
      this.reconnect = setTimeout(() => void this.listen(), pollMs);
    };
    const lost = (why: string) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      client.end().catch(() => undefined);
      if (!this.running) return;
      logger.warn(`${name} listener lost (${why}); polling every ${pollMs} ms until it is back`);
      retry();
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    try {
      await client.connect();
      await client.query(channels.map((c) => `LISTEN ${c}`).join('; '));
      this.listener = client;
      this.poke();
    } catch (err) {
      await client.end().catch(() => undefined);
      if (this.running) {
        logger.warn(`${name} listener not connected (${(err as Error).message}); retrying`);
        retry();
      }
    }
  }
}
