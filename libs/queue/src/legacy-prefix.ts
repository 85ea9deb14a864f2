import { Queue } from 'bullmq';

/** BullMQ's prefix before issue 14 (`ia:bull`): not a hash tag, so not usable on a Redis Cluster. */
export function legacyBullPrefix(redisPrefix: string): string {
  return `${redisPrefix}:bull`;
}

/** What one pass over a queue under the old prefix did. */
export interface LegacyMove {
  queue: string;
  moved: number;
  schedulersRemoved: number;
  /** Jobs still active there (an old worker holds them); the next pass looks again. */
  active: number;
  /** True when nothing is left under the old prefix for this queue (its keys were removed). */
  emptied: boolean;
}

/**
 * Moves the jobs still waiting under the old prefix (`ia:bull:<queue>`) into the same queue under
 * the current one, so queued work of a deployment upgraded from before issue 14 is not left behind:
 * waiting (paused included), prioritised and delayed jobs (a delayed job keeps its due time) are re-added with
 * the same id, name, data and options, and removed from the old queue (removed first: a job an old
 * worker takes meanwhile fails to be removed and is skipped). Job-scheduler jobs are not moved: the
 * old queue's schedulers are removed, the current prefix has its own. Attempts already made are not
 * carried over (Postgres counts a delivery's attempts). Jobs active there are left to the old worker
 * that holds them; once the old queue holds nothing, its keys are removed.
 */
export async function moveLegacyJobs(legacy: Queue, current: Queue): Promise<LegacyMove> {
  const result: LegacyMove = { queue: current.name, moved: 0, schedulersRemoved: 0, active: 0, emptied: false };
  const pending = () => legacy.getJobCounts('active', 'wait', 'prioritized', 'delayed', 'waiting-children');
  // Nothing there (the common case): two round trips.
  if ((await legacy.getJobSchedulersCount()) === 0 && Object.values(await pending()).every((n) => n === 0)) return { ...result, emptied: true };
  const client = await legacy.backend.client;
  for (const scheduler of await legacy.getJobSchedulers()) {
    if (await legacy.removeJobScheduler(scheduler.key)) result.schedulersRemoved++;
  }
  const jobs = await legacy.getJobs(['wait', 'prioritized', 'delayed'], 0, -1, true);
  for (const job of jobs) {
    if (!job?.id) continue;
    if (job.repeatJobKey) {
      await job.remove().catch(() => undefined);
      continue;
    }
    // BullMQ's delayed set scores a job by (due time in ms × 4096 + a counter).
    const score = await client.zscore(legacy.toKey('delayed'), job.id);
    const delay = score === null ? 0 : Math.max(0, Math.floor(Number(score) / 4096) - Date.now());
    try {
      await job.remove();
    } catch {
      continue; // taken by an old worker meanwhile
    }
    const { repeat: _repeat, repeatJobKey: _key, ...opts } = job.opts as Record<string, unknown>;
    await current.add(job.name, job.data, { ...(opts as typeof job.opts), jobId: job.id, delay });
    result.moved++;
  }
  const counts = await pending();
  result.active = counts.active;
  if (Object.values(counts).every((n) => n === 0)) {
    await legacy.obliterate({ force: true });
    result.emptied = true;
  }
  return result;
}
