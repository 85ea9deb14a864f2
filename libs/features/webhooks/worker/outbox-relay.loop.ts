import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { NotifiedLoop, CHANNELS } from '@kernel/database';
import { DeliveryQueues } from './delivery-queues';
import { WebhookSlots } from './webhook-slots';
import { Metrics, METRICS } from '@kernel/metrics';
import type { Counter } from 'prom-client';
import { DeliveryRecoveryService } from '../delivery-recovery.service';
import { OutboxRelayService, RELAY_BATCH_SIZE, TracedEvent } from '../outbox-relay.service';
import { TRY_NOW_PREFIX } from '../delivery-log.service';
import { inContext, SpanKind, startChildSpan, TraceContext } from '@kernel/telemetry';

/** Without a notification (missed while reconnecting, another database client), the loop still looks this often. */
export const RELAY_POLL_MS = 1000;
/** How often the loop looks for pending deliveries whose job was lost, and how overdue they must be. */
export const RECOVERY_EVERY_MS = 30_000;
export const RECOVERY_GRACE_MS = 30_000;
/** Overdue deliveries are read this many at a time, at most RECOVERY_MAX_PAGES pages per pass (parked ones are overdue too, and skipped). */
export const RECOVERY_PAGE = 1000;
export const RECOVERY_MAX_PAGES = 20;

/**
 * Runs the outbox relay in a loop rather than as a 1-second BullMQ schedule: an event must reach
 * its receiver in tens of milliseconds, so the loop wakes on Postgres NOTIFY (sent when the
 * event's transaction commits), drains the outbox batch by batch, queues the first attempts,
 * and polls every second in case a notification was missed. Every replica runs it; row locks
 * (SKIP LOCKED) keep them from relaying one row twice. It also queues resends and tries waiting
 * deliveries now (both notified by the service that made them) and, every 30 seconds, re-queues deliveries whose job was lost. This is
 * the one recovery trigger, not a scheduled job: it
 * runs on Postgres time in every replica, so it does not wait for Redis to hold its schedules
 * again after losing them — which is exactly when jobs are lost.
 */
@Injectable()
export class OutboxRelayLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelayLoop.name);
  private readonly resent = new Set<string>();
  /** Waiting deliveries to try now: their one retry job is brought forward. */
  private readonly triedNow = new Set<string>();
  private lastRecovery = 0;
  private readonly loop: NotifiedLoop;
  private readonly relayed: Counter;

  constructor(
    config: AppConfig,
    private readonly relay: OutboxRelayService,
    private readonly recovery: DeliveryRecoveryService,
    private readonly queues: DeliveryQueues,
    metrics: Metrics,
    private readonly slots: WebhookSlots,
  ) {
    this.relayed = metrics.counter(METRICS.outboxRelayed);
    this.loop = new NotifiedLoop({
      name: 'relay',
      databaseUrl: config.databaseDirectUrl, // LISTEN needs a session: never through a pooler
      channels: [CHANNELS.outboxEvents, CHANNELS.deliveries],
      pollMs: RELAY_POLL_MS,
      pass: () => this.tick(),
      onNotification: (n) => {
        if (n.channel !== CHANNELS.deliveries || !n.payload) return;
        if (n.payload.startsWith(TRY_NOW_PREFIX)) this.triedNow.add(n.payload.slice(TRY_NOW_PREFIX.length));
        else this.resent.add(n.payload);
      },
      logger: this.logger,
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }

  /** One pass: relay everything waiting, queue resends, and now and then recover lost jobs. */
  async tick(): Promise<void> {
    for (;;) {
      const startTime = Date.now();
      const { events, deliveries, traced } = await this.relay.relayBatch(RELAY_BATCH_SIZE);
      // Deliveries of a webhook already at its cap are parked here, without a job (WebhookSlots.admit).
      const admitted = await this.slots.admit(deliveries);
      if (traced.length === 0) await this.queues.first(admitted);
      else await this.queueTraced(admitted, traced, startTime);
      this.relayed.inc(events);
      if (events < RELAY_BATCH_SIZE || !this.loop.isRunning) break;
    }
    // A recovery notifies hundreds of deliveries at once: their Redis calls go out together, not one
    // round trip after another, so the first attempts are queued (and sent) at once.
    if (this.resent.size > 0) {
      const ids = [...this.resent];
      this.resent.clear();
      await Promise.all(ids.map((id) => this.queues.dropRetry(id)));
      await this.queues.first(ids);
    }
    if (this.triedNow.size > 0) {
      const ids = [...this.triedNow];
      this.triedNow.clear();
      // The delivery's one retry job, moved to now (or made again if it was lost): never a second job
      // beside it, so every worker that heard the notification brings the same job forward.
      await Promise.all(ids.map((id) => this.queues.retry(id, 0)));
    }
    if (Date.now() - this.lastRecovery >= RECOVERY_EVERY_MS) {
      this.lastRecovery = Date.now();
      await this.recover();
    }
  }

  /**
   * Tracing on: one `outbox relay` span per relayed event, a child of the request that made it
   * (from the outbox row; it starts when the batch was taken), and each admitted delivery's job
   * carries that span's context, so its attempt is a child of it: one trace from the request to the
   * attempt. (Jobs queued later — parked ones given a slot, retries, resends, recoveries — carry
   * the context stored in the delivery row: DeliveryQueues.) The queueing itself (BullMQ's
   * `addBulk` span) belongs to the event when the batch holds one traced event, to no request otherwise.
   */
  private async queueTraced(admitted: string[], traced: TracedEvent[], startTime: number): Promise<void> {
    const relays = traced.map((e) => ({
      event: e,
      started: startChildSpan('outbox relay', {
        kind: SpanKind.PRODUCER,
        parent: e,
        startTime,
        attributes: { 'outbox.event_id': e.id, 'outbox.event': e.event, 'webhook.deliveries': e.deliveryIds.length },
      }),
    }));
    const contexts = new Map<string, TraceContext>();
    for (const r of relays) for (const id of r.event.deliveryIds) if (r.started) contexts.set(id, r.started.carried);
    try {
      const only = relays.length === 1 ? relays[0].started?.carried : undefined;
      await inContext(only, () => this.queues.first(admitted, contexts));
    } finally {
      for (const r of relays) r.started?.span.end();
    }
  }

  /**
   * Queues again, under the same job ids, pending deliveries whose attempt is overdue and unheld:
   * deliveries parked behind their webhook's cap, or in flight, are skipped (WebhookSlots.unheld),
   * so a hanging receiver's thousands of parked deliveries are read but not re-queued each pass.
   * Pages through the overdue deliveries (RECOVERY_MAX_PAGES × RECOVERY_PAGE per pass at most), so
   * parked ones never hide a lost job behind them.
   */
  async recover(graceMs = RECOVERY_GRACE_MS): Promise<number> {
    let requeued = 0;
    let after: { nextAttemptAt: Date; id: string } | undefined;
    for (let page = 0; page < RECOVERY_MAX_PAGES; page++) {
      const overdue = await this.recovery.overdue(graceMs, RECOVERY_PAGE, after);
      if (overdue.length === 0) break;
      const lost = await this.slots.unheld(overdue);
      await this.queues.first(lost.filter((d) => d.attempts === 0).map((d) => d.id));
      for (const d of lost.filter((x) => x.attempts > 0)) await this.queues.retry(d.id, 0);
      requeued += lost.length;
      if (overdue.length < RECOVERY_PAGE) break;
      after = overdue[overdue.length - 1];
    }
    if (requeued > 0) this.logger.log(`re-queued ${requeued} overdue deliveries`);
    return requeued;
  }
}
