import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { bullConnection, legacyBullPrefix, moveLegacyJobs, QUEUES } from '@app/queue';
import { Queue } from 'bullmq';

/** How often the worker looks again while something is left under the old prefix (old replicas may still be adding). */
export const LEGACY_CHECK_MS = 60_000;

/**
 * Upgrades from before issue 14: BullMQ's prefix became a hash tag (`{ia}:bull`, see libs/queue
 * bullPrefix). Each worker moves the jobs still waiting under the old prefix (`ia:bull`) into the
 * current queues once started (in the background), and again every minute until nothing is left there (old api replicas of a
 * rolling upgrade may still be adding some). A deployment that never had the old prefix pays one
 * EXISTS per queue, once.
 */
@Injectable()
export class LegacyQueueMover implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LegacyQueueMover.name);
  private readonly legacy = new Map<string, Queue>();
  /** Queues found empty under the old prefix: not looked at again. */
  private readonly emptied = new Set<string>();
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Not awaited: start-up (and the signal handlers installed after it) does not wait for Redis here. */
  onApplicationBootstrap(): void {
    void this.pass();
    this.timer = setInterval(() => void this.pass(), LEGACY_CHECK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    // A pass waiting for an absent Redis must not hold the shutdown: give it a moment, then close under it.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise((resolve) => (timer = setTimeout(resolve, 2000)))]);
    clearTimeout(timer);
    await this.closeAll();
  }

  /** One look at every queue under the old prefix; queues found empty are not looked at again. */
  pass(): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = (async () => {
      for (const name of Object.values(QUEUES).filter((n) => !this.emptied.has(n))) {
        if (this.stopped) return;
        const legacy = this.legacy.get(name) ?? this.open(name);
        const current = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
        const r = await moveLegacyJobs(legacy, current);
        if (r.moved || r.schedulersRemoved) {
          this.logger.log(
            `queue ${name}: moved ${r.moved} jobs from the pre-issue-14 prefix ${legacy.opts.prefix}, removed ${r.schedulersRemoved} old schedules`,
          );
        }
        if (r.emptied) {
          this.emptied.add(name);
          this.legacy.delete(name);
          await legacy.close();
        }
      }
      if (this.emptied.size === Object.values(QUEUES).length) clearInterval(this.timer);
    })()
      .catch((err: Error) => this.logger.warn(`jobs under the old queue prefix not moved (${err.message}); trying again in a minute`))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private open(name: string): Queue {
    const queue = new Queue(name, { connection: bullConnection(this.config.redis), prefix: legacyBullPrefix(this.config.redisPrefix) });
    queue.on('error', () => undefined); // its commands' failures reach pass() and are logged there
    this.legacy.set(name, queue);
    return queue;
  }

  private async closeAll(): Promise<void> {
    for (const queue of this.legacy.values()) await queue.close().catch(() => undefined);
    this.legacy.clear();
  }
}
