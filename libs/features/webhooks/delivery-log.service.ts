import { Injectable } from '@nestjs/common';
import { CHANNELS, CursorCodec, paginateRows, TransactionHost } from '@kernel/database';
import { Clock, DEFAULT_PAGE_SIZE, isId, MAX_PAGE_SIZE, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import { DeliveryState, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { ATTEMPT_SUMMARY_COLUMNS, DELIVERY_COLUMNS, toAttempt, toDelivery } from './webhook-rows';
import { deliveryBody } from './model/give-up';

export interface LoggedDelivery {
  delivery: WebhookDeliveryEntity;
  /**
   * Every attempt of every series, oldest first: with its exchange when the delivery is read alone
   * (`get`), its summary only in a page of the log (`list`).
   */
  attempts: WebhookDeliveryAttemptEntity[];
}

/**
 * The body every attempt of a delivery sent, byte for byte: the sender builds it from the delivery's
 * row, which is where it is kept (once per delivery, not per attempt).
 */
export const sentBody = (d: WebhookDeliveryEntity): string => deliveryBody({ id: d.id, event: d.event, occurred_at: d.occurredAt, data: d.data });

/** What a resend did: a new series started, or a delivery waiting for a retry was tried now instead. */
export type ResendAction = 'resent' | 'tried_now';

/** What one recovery request did, and whether more is left for the next. */
export interface Recovery {
  /** Failed and given-up deliveries that started a new series. */
  resent: number;
  /** Deliveries waiting for a retry that are tried now instead. */
  triedNow: number;
  /** True when more deliveries of the range are left to recover: ask again. */
  more: boolean;
}

/** The payload of a delivery's notification when it is to be tried now (its scheduled attempt brought forward); a resend's is the bare id. */
export const TRY_NOW_PREFIX = 'now:';

const isDeliveryId = (id: string) => /^[0-9a-f]{32}$/.test(id);

/** The states a delivery can be in, as the log filters them. */
export const DELIVERY_STATES: readonly DeliveryState[] = ['queued', 'waiting', 'delivered', 'failed', 'given_up'];

/** A bulk resend takes at most this many deliveries per request (the oldest first); ask again for the rest. */
export const MAX_BULK_RESEND = 500;

/** Narrows the log: only deliveries in this state, of this event, made in [since, until) (the keyset order stays). */
export interface DeliveryFilter {
  state?: string;
  event?: string;
  since?: Date;
  until?: Date;
}

/** The one check of a time range, for the log's filter and for recovery: real times, the end after the start. */
export function checkRange(since: Date | undefined, until: Date | undefined, sinceField = 'since', untilField = 'until'): void {
  if (since && Number.isNaN(since.getTime())) throw validationFailed(sinceField, 'must be a time');
  if (until && Number.isNaN(until.getTime())) throw validationFailed(untilField, 'must be a time');
  if (since && until && until.getTime() <= since.getTime()) throw validationFailed(untilField, `must be later than ${sinceField}`);
}

/** The states a recovery can take deliveries in. */
export type RecoverableState = 'failed' | 'given_up' | 'waiting';

/** What a recovery takes unless told otherwise: failed, given up and waiting. */
export const RECOVERABLE_STATES: readonly RecoverableState[] = ['failed', 'given_up', 'waiting'];

/**
 * Deliveries a recovery takes, of the states given (parameter `$n`, a text array; the time now is
 * `$5`): failed or given up, or waiting for a retry not yet due (one already due is being tried).
 */
const recoverable = (n: number) =>
  `((state IN ('failed', 'given_up') AND state = ANY ($${n}::text[])) OR (state = 'waiting' AND 'waiting' = ANY ($${n}::text[]) AND next_attempt_at > $5::timestamptz))`;

/**
 * What a manager sees of a webhook's deliveries and what they can do about one: the log (each
 * delivery with its attempts) and a resend (a new series of attempts for the same delivery id,
 * on the usual timetable). The admin CLI uses it now and the web console later; `organisationId`
 * confines a call to one organisation (the console), the operator passes none.
 */
@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly cursors: CursorCodec,
  ) {}

  /**
   * A webhook's deliveries, newest first, each with its attempts' summaries (not their exchanges:
   * a page stays small). Removed webhooks are listed too.
   * Keyset-paginated (no offset, no count): with a filter, the (webhook, state) or (webhook, event)
   * index serves the page as the (webhook) one serves the whole log.
   */
  async list(webhookId: string, page: PageRequest = {}, organisationId?: string, filter: DeliveryFilter = {}): Promise<Page<LoggedDelivery>> {
    if (!isId(webhookId)) throw notFound('webhook');
    const limit = Math.min(Math.max(page.limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
    const params: unknown[] = [webhookId, organisationId ?? null];
    let where = 'webhook_id = $1';
    if (filter.state !== undefined) {
      if (!(DELIVERY_STATES as string[]).includes(filter.state)) {
        throw validationFailed('state', `must be one of ${DELIVERY_STATES.join(', ')}`);
      }
      params.push(filter.state);
      where += ` AND state = $${params.length}`;
    }
    if (filter.event !== undefined) {
      if (filter.event === '' || filter.event.length > 100) throw validationFailed('event', 'must name an event');
      params.push(filter.event);
      where += ` AND event = $${params.length}`;
    }
    checkRange(filter.since, filter.until);
    if (filter.since) {
      params.push(filter.since.toISOString());
      where += ` AND created_at >= $${params.length}`;
    }
    if (filter.until) {
      params.push(filter.until.toISOString());
      where += ` AND created_at < $${params.length}`;
    }
    // One round trip: the page's deliveries, each with its attempts (a subquery run for the page's
    // rows only, under the LIMIT), and the ownership check as a one-time condition. An empty
    // answer is then told apart below: another organisation's or an unknown webhook is not found.
    const rows = await paginateRows(this.tx.manager, { ...page, limit }, this.cursors, {
      sql:
        `SELECT ${DELIVERY_COLUMNS}, (SELECT coalesce(json_agg(a ORDER BY a.id), '[]'::json) FROM (SELECT ${ATTEMPT_SUMMARY_COLUMNS} FROM webhook_delivery_attempts WHERE delivery_id = d.id) a) AS attempts_json` +
        ` FROM webhook_deliveries d WHERE ${where}` +
        ` AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = $1 AND ($2::bigint IS NULL OR w.organisation_id = $2))`,
      params,
      idType: 'char(32)',
      isId: isDeliveryId,
      toItem: (r) => ({ delivery: toDelivery(r), attempts: (r.attempts_json as Array<Record<string, unknown>>).map(toAttempt) }),
      position: (l) => ({ createdAt: l.delivery.createdAt, id: l.delivery.id }),
    });
    if (rows.items.length === 0) await this.ownWebhook(webhookId, organisationId);
    return rows;
  }

  /** One delivery with its attempts, each with its exchange (`exchange` false: their summaries, or none when only the delivery is needed). */
  async get(deliveryId: string, organisationId?: string, exchange = true): Promise<LoggedDelivery> {
    const [row] = isDeliveryId(deliveryId)
      ? await this.tx.manager.query(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND ($2::bigint IS NULL OR organisation_id = $2)`, [
          deliveryId,
          organisationId ?? null,
        ])
      : [];
    if (!row) throw notFound('delivery');
    const attempts: Array<Record<string, unknown>> = await this.tx.manager.query(
      `SELECT ${exchange ? '*' : ATTEMPT_SUMMARY_COLUMNS} FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id`,
      [deliveryId],
    );
    return { delivery: toDelivery(row), attempts: attempts.map(toAttempt) };
  }

  /**
   * Starts a new series of attempts for a delivered, failed or given-up delivery (same id, so
   * receivers can still discard a repeat). The checks before an attempt apply as always: a
   * delivery of a removed webhook is given up again at once. Test deliveries are not resent; one
   * still queued or waiting answers 422 (resendOrTryNow tries a waiting one now instead).
   */
  async resend(deliveryId: string, organisationId?: string): Promise<WebhookDeliveryEntity> {
    const current = (await this.get(deliveryId, organisationId, false)).delivery;
    if (current.isTest) throw validationFailed('delivery', 'is a test delivery; tests are never resent (send another test)');
    return this.tx.run(async (m) => {
      const now = this.clock.now().toISOString();
      const rows: Array<Record<string, unknown>> = await m.query(
        `WITH again AS (
           UPDATE webhook_deliveries SET state = 'queued', series = series + 1, attempts = 0, next_attempt_at = $2,
                  give_up_reason = NULL, finished_at = NULL, updated_at = $2
            WHERE id = $1 AND state IN ('delivered', 'failed', 'given_up') RETURNING ${DELIVERY_COLUMNS})
         SELECT * FROM again`,
        [deliveryId, now],
      );
      if (!rows[0]) throw validationFailed('delivery', 'is still being attempted; resend it once it is delivered, failed or given up');
      // Delivered on commit: a worker queues the first attempt at once (or its recovery sweep does later).
      await m.query(`SELECT pg_notify($1, $2)`, [CHANNELS.deliveries, deliveryId]);
      return toDelivery(rows[0]);
    });
  }

  /**
   * What the API's resend does: resend, except that a delivery waiting for a retry is tried now
   * (tryNow) rather than refused, and a queued one (its first attempt on its way) answers 422.
   */
  async resendOrTryNow(deliveryId: string, organisationId?: string): Promise<{ delivery: WebhookDeliveryEntity; action: ResendAction }> {
    const current = (await this.get(deliveryId, organisationId, false)).delivery;
    if (!current.isTest && current.state === 'waiting') return { delivery: await this.tryNow(deliveryId, organisationId), action: 'tried_now' };
    if (current.state === 'queued')
      throw validationFailed('delivery', 'is queued: its first attempt is on its way; resend it once it is delivered, failed or given up');
    return { delivery: await this.resend(deliveryId, organisationId), action: 'resent' };
  }

  /**
   * A delivery waiting for a retry is tried now: its scheduled attempt is brought forward, not
   * doubled. The row's next attempt becomes now, and the workers move the delivery's one retry job
   * to now (DeliveryQueues.retry): one job per delivery, so one attempt; an attempt already in
   * flight is that attempt, and its record schedules the next as usual. Anything but a waiting
   * delivery answers 422.
   */
  async tryNow(deliveryId: string, organisationId?: string): Promise<WebhookDeliveryEntity> {
    const current = (await this.get(deliveryId, organisationId, false)).delivery;
    if (current.isTest) throw validationFailed('delivery', 'is a test delivery; tests are never retried (send another test)');
    return this.tx.run(async (m) => {
      const now = this.clock.now().toISOString();
      const rows: Array<Record<string, unknown>> = await m.query(
        `WITH soon AS (
           UPDATE webhook_deliveries SET next_attempt_at = LEAST(next_attempt_at, $2::timestamptz), updated_at = $2
            WHERE id = $1 AND state = 'waiting' RETURNING ${DELIVERY_COLUMNS})
         SELECT * FROM soon`,
        [deliveryId, now],
      );
      if (!rows[0]) throw validationFailed('delivery', 'is not waiting for a retry; only a waiting delivery can be tried now (resend a finished one)');
      await m.query(`SELECT pg_notify($1, $2)`, [CHANNELS.deliveries, `${TRY_NOW_PREFIX}${deliveryId}`]);
      return toDelivery(rows[0]);
    });
  }

  /**
   * How many deliveries a recovery of this webhook in [since, until) would take now, counted up to
   * MAX_BULK_RESEND + 1 at most (never a count of the whole log): the same rows recover picks.
   */
  async countRecoverable(
    webhookId: string,
    since: Date,
    until?: Date,
    organisationId?: string,
    states: readonly RecoverableState[] = RECOVERABLE_STATES,
  ): Promise<number> {
    await this.ownWebhook(webhookId, organisationId);
    checkRange(since, until);
    const [{ n }] = await this.tx.manager.query(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM webhook_deliveries
          WHERE webhook_id = $1 AND NOT is_test AND created_at >= $2 AND ($3::timestamptz IS NULL OR created_at < $3) AND ${recoverable(6)}
          LIMIT $4) picked`,
      [webhookId, since.toISOString(), until?.toISOString() ?? null, MAX_BULK_RESEND + 1, this.clock.now().toISOString(), [...states]],
    );
    return Number(n);
  }

  /**
   * After a receiver's outage: every delivery of one webhook made in [since, until) that failed, was
   * given up, or is waiting for a retry (of those `states`: all three unless told) is sent now, the oldest first and at most MAX_BULK_RESEND
   * per call. Failed and given-up ones start a new series (as resend does for one); waiting ones are
   * tried now (as tryNow does: their scheduled attempt is brought forward, never doubled). Tests
   * are never resent. One statement picks, changes and wakes the workers; rows another request or
   * an attempt's record holds are skipped, not waited for. A waiting delivery already due is being
   * tried and is not picked, so asking again (while `more`) moves on to the rest.
   */
  async recover(
    webhookId: string,
    since: Date,
    until?: Date,
    organisationId?: string,
    states: readonly RecoverableState[] = RECOVERABLE_STATES,
  ): Promise<Recovery> {
    await this.ownWebhook(webhookId, organisationId);
    checkRange(since, until);
    const now = this.clock.now().toISOString();
    const [row] = await this.tx.manager.query(
      `WITH candidates AS MATERIALIZED (
         SELECT id, created_at FROM webhook_deliveries
          WHERE webhook_id = $1 AND NOT is_test AND created_at >= $2 AND ($3::timestamptz IS NULL OR created_at < $3) AND ${recoverable(8)}
          ORDER BY created_at, id
          LIMIT $4 + 1
            FOR UPDATE SKIP LOCKED),
       picked AS (SELECT id FROM candidates ORDER BY created_at, id LIMIT $4),
       again AS (
         UPDATE webhook_deliveries d SET state = 'queued', series = series + 1, attempts = 0, next_attempt_at = $5,
                give_up_reason = NULL, finished_at = NULL, updated_at = $5
           FROM picked
          WHERE d.id = picked.id AND d.state IN ('failed', 'given_up')
         RETURNING d.id),
       soon AS (
         UPDATE webhook_deliveries d SET next_attempt_at = $5, updated_at = $5
           FROM picked
          WHERE d.id = picked.id AND d.state = 'waiting'
         RETURNING d.id),
       woken AS (
         SELECT pg_notify($6, id) FROM again
         UNION ALL
         SELECT pg_notify($6, $7 || id) FROM soon)
       SELECT (SELECT count(*)::int FROM again) AS resent, (SELECT count(*)::int FROM soon) AS tried_now,
              (SELECT count(*)::int FROM candidates) > $4 AS more, (SELECT count(*)::int FROM woken) AS woken`,
      [webhookId, since.toISOString(), until?.toISOString() ?? null, MAX_BULK_RESEND, now, CHANNELS.deliveries, TRY_NOW_PREFIX, [...states]],
    );
    return { resent: Number(row.resent), triedNow: Number(row.tried_now), more: Boolean(row.more) };
  }

  /** The webhook (removed ones too), confined to the organisation when one is given. */
  private async ownWebhook(webhookId: string, organisationId?: string): Promise<void> {
    if (!isId(webhookId)) throw notFound('webhook');
    const [hook] = await this.tx.manager.query(`SELECT id FROM webhooks WHERE id = $1 AND ($2::bigint IS NULL OR organisation_id = $2)`, [
      webhookId,
      organisationId ?? null,
    ]);
    if (!hook) throw notFound('webhook');
  }
}
