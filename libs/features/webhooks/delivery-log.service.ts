import { Injectable } from '@nestjs/common';
import { CHANNELS, CursorCodec, paginateRows, TransactionHost } from '@kernel/database';
import { Clock, DEFAULT_PAGE_SIZE, isId, MAX_PAGE_SIZE, notFound, Page, PageRequest, validationFailed } from '@kernel/core';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import { DeliveryState, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { DELIVERY_COLUMNS, toAttempt, toDelivery } from './webhook-rows';

export interface LoggedDelivery {
  delivery: WebhookDeliveryEntity;
  /** Every attempt of every series, oldest first. */
  attempts: WebhookDeliveryAttemptEntity[];
}

const isDeliveryId = (id: string) => /^[0-9a-f]{32}$/.test(id);

/** The states a delivery can be in, as the log filters them. */
export const DELIVERY_STATES: readonly DeliveryState[] = ['queued', 'waiting', 'delivered', 'failed', 'given_up'];

/** A bulk resend takes at most this many deliveries per request (the oldest first); ask again for the rest. */
export const MAX_BULK_RESEND = 500;

/** Narrows the log: only deliveries in this state and/or of this event (the keyset order stays). */
export interface DeliveryFilter {
  state?: string;
  event?: string;
}

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
   * A webhook's deliveries, newest first, each with its attempts. Removed webhooks are listed too.
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
    // One round trip: the page's deliveries, each with its attempts (a subquery run for the page's
    // rows only, under the LIMIT), and the ownership check as a one-time condition. An empty
    // answer is then told apart below: another organisation's or an unknown webhook is not found.
    const rows = await paginateRows(this.tx.manager, { ...page, limit }, this.cursors, {
      sql:
        `SELECT ${DELIVERY_COLUMNS}, (SELECT coalesce(json_agg(a ORDER BY a.id), '[]'::json) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id) AS attempts_json` +
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

  /** One delivery with its attempts. */
  async get(deliveryId: string, organisationId?: string): Promise<LoggedDelivery> {
    const [row] = isDeliveryId(deliveryId)
      ? await this.tx.manager.query(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND ($2::bigint IS NULL OR organisation_id = $2)`, [
          deliveryId,
          organisationId ?? null,
        ])
      : [];
    if (!row) throw notFound('delivery');
    const attempts: Array<Record<string, unknown>> = await this.tx.manager.query(`SELECT * FROM webhook_delivery_attempts WHERE delivery_id = $1 ORDER BY id`, [
      deliveryId,
    ]);
    return { delivery: toDelivery(row), attempts: attempts.map(toAttempt) };
  }

  /**
   * Starts a new series of attempts for a delivered, failed or given-up delivery (same id, so
   * receivers can still discard a repeat). The checks before an attempt apply as always: a
   * delivery of a removed webhook is given up again at once. Test deliveries are not resent.
   */
  async resend(deliveryId: string, organisationId?: string): Promise<WebhookDeliveryEntity> {
    const current = (await this.get(deliveryId, organisationId)).delivery;
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
   * How many deliveries a bulk resend of this webhook since `since` would take now, counted up to
   * MAX_BULK_RESEND + 1 at most (never a count of the whole log): the same rows resendFailedSince picks.
   */
  async countResendable(webhookId: string, since: Date, organisationId?: string): Promise<number> {
    await this.ownWebhook(webhookId, organisationId);
    const [{ n }] = await this.tx.manager.query(
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM webhook_deliveries
          WHERE webhook_id = $1 AND state IN ('failed', 'given_up') AND NOT is_test AND created_at >= $2
          LIMIT $3) picked`,
      [webhookId, since.toISOString(), MAX_BULK_RESEND + 1],
    );
    return Number(n);
  }

  /**
   * The morning after a receiver's outage: every failed or given-up delivery of one webhook made
   * since `since` starts a new series, as resend does for one (tests are never resent), the
   * oldest first and at most MAX_BULK_RESEND per call, in one statement that also wakes the
   * workers. Answers how many were resent.
   */
  async resendFailedSince(webhookId: string, since: Date, organisationId?: string): Promise<number> {
    await this.ownWebhook(webhookId, organisationId);
    if (Number.isNaN(since.getTime())) throw validationFailed('since', 'must be a time');
    const now = this.clock.now().toISOString();
    const rows: unknown[] = await this.tx.manager.query(
      `WITH picked AS (
         SELECT id FROM webhook_deliveries
          WHERE webhook_id = $1 AND state IN ('failed', 'given_up') AND NOT is_test AND created_at >= $2
          ORDER BY created_at, id
          LIMIT $3
            FOR UPDATE SKIP LOCKED),
       again AS (
         UPDATE webhook_deliveries d SET state = 'queued', series = series + 1, attempts = 0, next_attempt_at = $4,
                give_up_reason = NULL, finished_at = NULL, updated_at = $4
           FROM picked
          WHERE d.id = picked.id AND d.state IN ('failed', 'given_up')
         RETURNING d.id)
       SELECT pg_notify($5, id) FROM again`,
      [webhookId, since.toISOString(), MAX_BULK_RESEND, now, CHANNELS.deliveries],
    );
    return rows.length;
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
