import type { Queue } from 'bullmq';
import { MAINTENANCE_JOBS, QUEUES, TRANSLATION_JOBS } from './queues';

const MINUTE_MS = 60_000;

export interface Schedule {
  queue: (typeof QUEUES)[keyof typeof QUEUES];
  /** The job's name, also the scheduler's fixed id (so an upsert by any replica is the same schedule). */
  job: string;
  every: number;
}

/**
 * Every repeatable job of the worker, in one place. Redis holds the schedules and may lose them
 * (a restart without persistence, a flush), so the worker upserts this whole table at start and
 * again whenever one is found missing (see the worker's ScheduleKeeper); a job added here is
 * scheduled by every worker, with nothing else to wire.
 */
export const SCHEDULES: readonly Schedule[] = [
  { queue: QUEUES.maintenance, job: MAINTENANCE_JOBS.sweepIdempotencyKeys, every: 60 * MINUTE_MS },
  { queue: QUEUES.maintenance, job: MAINTENANCE_JOBS.sweepDeliveries, every: 24 * 60 * MINUTE_MS },
  { queue: QUEUES.maintenance, job: MAINTENANCE_JOBS.switchOffFailingWebhooks, every: 5 * MINUTE_MS },
  { queue: QUEUES.maintenance, job: MAINTENANCE_JOBS.sweepProvisioningEvents, every: 24 * 60 * MINUTE_MS },
  { queue: QUEUES.maintenance, job: MAINTENANCE_JOBS.warnScimRefusals, every: 5 * MINUTE_MS },
  { queue: QUEUES.translations, job: TRANSLATION_JOBS.requeueStale, every: MINUTE_MS },
];

/**
 * Upserts the schedules (all of them, or with `onlyMissing` those Redis does not know), by fixed
 * id: idempotent, so any number of workers may run it at any time and there is one schedule per
 * job. `everyMs` (SCHEDULE_EVERY_MS, tests only) replaces every period. Returns the jobs upserted.
 */
export async function upsertSchedules(queueOf: (name: Schedule['queue']) => Queue, onlyMissing = false, everyMs?: number): Promise<string[]> {
  const done: string[] = [];
  for (const s of SCHEDULES) {
    const queue = queueOf(s.queue);
    if (onlyMissing && (await queue.getJobScheduler(s.job))) continue;
    await queue.upsertJobScheduler(s.job, { every: everyMs ?? s.every }, { name: s.job, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } });
    done.push(s.job);
  }
  return done;
}
