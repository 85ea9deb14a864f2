import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { GAUGES, Metrics, OUTBOX_BACKLOG_CAP, Sample } from '@kernel/metrics';
import { DeliveryJob, QUEUES } from '@kernel/queue';
import { Job, Queue } from 'bullmq';
import { DataSource } from 'typeorm';

/** The job states counted per queue, BullMQ's name → the label. */
const STATES = { wait: 'waiting', active: 'active', delayed: 'delayed', prioritized: 'prioritized', failed: 'failed' } as const;
/** BullMQ keeps a delayed job's due time, in ms, as its score times 0x1000 (the low bits order jobs due in the same ms). */
const DELAYED_SCORE_SHIFT = 0x1000;

/**
 * When a waiting job became due: the latest of its creation (plus its first delay), its last start
 * (a job tried again after an unexpected error) and, for webhook retries, the due time the
 * processor wrote when it delayed the job (BullMQ forgets it when the delay ends).
 */
export function dueSince(job: Pick<Job<Partial<DeliveryJob>>, 'timestamp' | 'processedOn' | 'opts' | 'data'>): number {
  return Math.max(job.timestamp + (job.opts?.delay ?? 0), job.processedOn ?? 0, job.data?.dueAt ?? 0);
}

/**
 * The worker's scrape-time gauges, read when Prometheus scrapes (a few Redis commands per queue and
 * one indexed Postgres statement), never on a timer: job counts and the age of the job that has
 * waited longest per queue, the outbox backlog and the relay lag. Every worker reports the same
 * values (they read shared state): take max() across workers, not sum().
 */
@Injectable()
export class WorkerGauges implements OnModuleInit {
  private readonly queues: Queue[];

  constructor(
    private readonly metrics: Metrics,
    private readonly dataSource: DataSource,
    @InjectQueue(QUEUES.maintenance) maintenance: Queue,
    @InjectQueue(QUEUES.webhookDeliveries) webhookDeliveries: Queue,
    @InjectQueue(QUEUES.webhookRetries) webhookRetries: Queue,
    @InjectQueue(QUEUES.translations) translations: Queue,
  ) {
    this.queues = [maintenance, webhookDeliveries, webhookRetries, translations];
  }

  onModuleInit(): void {
    this.metrics.collectAtScrape('queues', [GAUGES.queueJobs, GAUGES.queueOldestWaitingAge], () => this.readQueues());
    this.metrics.collectAtScrape('outbox', [GAUGES.outboxBacklog, GAUGES.outboxRelayLag], () => this.readOutbox());
  }

  private async readQueues(): Promise<Sample[]> {
    const perQueue = await Promise.all(this.queues.map((q) => this.readQueue(q)));
    return perQueue.flat();
  }

  private async readQueue(queue: Queue): Promise<Sample[]> {
    const client = await queue.backend.client;
    const [counts, [oldest], [, delayedScore]] = await Promise.all([
      queue.getJobCounts(...(Object.keys(STATES) as Array<keyof typeof STATES>)),
      queue.getJobs(['wait'], 0, 0, true) as Promise<Array<Job<Partial<DeliveryJob>>>>,
      client.zrange(queue.keys.delayed, 0, 0, { WITHSCORES: true }),
    ]);
    const now = Date.now();
    const waitingSince = oldest ? dueSince(oldest) : now;
    // A delayed job whose time has come but that no worker has moved on yet (all busy, or none running) waits too.
    const overdueSince = delayedScore !== undefined ? Math.min(now, Math.floor(Number(delayedScore) / DELAYED_SCORE_SHIFT)) : now;
    const samples: Sample[] = Object.entries(STATES).map(([state, label]) => ({
      gauge: GAUGES.queueJobs,
      labels: { queue: queue.name, state: label },
      value: counts[state] ?? 0,
    }));
    samples.push({ gauge: GAUGES.queueOldestWaitingAge, labels: { queue: queue.name }, value: Math.max(0, now - Math.min(waitingSince, overdueSince)) / 1000 });
    return samples;
  }

  private async readOutbox(): Promise<Sample[]> {
    // Both from the partial index on unrelayed rows: the count stops at the cap, the oldest is its first entry.
    const [row] = await this.dataSource.query(
      `SELECT (SELECT count(*)::int FROM (SELECT 1 FROM outbox_events WHERE relayed_at IS NULL LIMIT $1) b) AS backlog,
              COALESCE(EXTRACT(EPOCH FROM now() - (SELECT min(created_at) FROM outbox_events WHERE relayed_at IS NULL)), 0)::float8 AS lag`,
      [OUTBOX_BACKLOG_CAP],
    );
    return [
      { gauge: GAUGES.outboxBacklog, value: Number(row.backlog) },
      { gauge: GAUGES.outboxRelayLag, value: Math.max(0, Number(row.lag)) },
    ];
  }
}
