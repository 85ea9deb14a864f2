import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { QUEUES, Schedule, SCHEDULES, upsertSchedules } from '@kernel/queue';
import { Queue } from 'bullmq';

/** How often the keeper checks that Redis still holds every schedule (a flush comes with no reconnect). */
export const SCHEDULE_CHECK_MS = 20_000;

/**
 * Keeps the schedules table (libs/queue SCHEDULES) in Redis. Every worker upserts it at start, so
 * none depends on another; Redis may then lose it (restarted without persistence, flushed), so
 * the keeper upserts the missing ones again when its connection is ready after a loss, and every
 * SCHEDULE_CHECK_MS in case the loss came without a reconnect. Upserts are by fixed id: two
 * workers make one schedule per job.
 */
@Injectable()
export class ScheduleKeeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ScheduleKeeper.name);
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private stopped = false;

  constructor(
    @InjectQueue(QUEUES.maintenance) private readonly maintenance: Queue,
    @InjectQueue(QUEUES.translations) private readonly translations: Queue,
    private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const everyMs = this.config.scheduleEveryMs;
    await upsertSchedules(this.queueOf, false, everyMs);
    this.logger.log(`scheduled ${SCHEDULES.map((s) => `${s.job} every ${(everyMs ?? s.every) / 60_000} min`).join(', ')}`);
    for (const queue of [this.maintenance, this.translations]) {
      const client = await queue.backend.client;
      client.on('ready', () => void this.check('connection ready again'));
    }
    this.timer = setInterval(() => void this.check('periodic check'), SCHEDULE_CHECK_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Upserts the schedules Redis lacks; skipped while a queue's connection is not ready (its commands would wait). */
  check(why: string): Promise<void> {
    if (this.checking || this.stopped) return this.checking ?? Promise.resolve();
    this.checking = (async () => {
      for (const queue of [this.maintenance, this.translations]) if ((await queue.backend.client).status !== 'ready') return;
      const made = await upsertSchedules(this.queueOf, true, this.config.scheduleEveryMs);
      if (made.length > 0) this.logger.warn(`${why}: schedules missing from Redis were made again: ${made.join(', ')}`);
    })()
      .catch((err: Error) => this.logger.warn(`${why}: schedules not checked (${err.message}); trying again later`))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  private readonly queueOf = (name: Schedule['queue']): Queue => {
    if (name === QUEUES.maintenance) return this.maintenance;
    if (name === QUEUES.translations) return this.translations;
    throw new Error(`no queue ${name} is scheduled by the worker`);
  };
}
