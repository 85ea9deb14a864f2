import { EntityManager } from 'typeorm';
import { WebhookDeliveryAttemptEntity } from './webhook-delivery-attempt.entity';
import type { ErrorClass, Headers } from './model/exchange';
import { GiveUpReason } from './model/give-up';
import { DeliveryState, WebhookDeliveryEntity } from './webhook-delivery.entity';
import { WebhookEntity } from './webhook.entity';

/** Raw rows (snake_case, as Postgres answers) → entities. Hot paths use SQL, not repositories. */
type Row = Record<string, unknown>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));

export const WEBHOOK_COLUMNS = 'id, organisation_id, connection_id, url, events, created_at, failing_since, switched_off_at, deleted_at';

export function toWebhook(r: Row): WebhookEntity {
  return Object.assign(new WebhookEntity(), {
    id: String(r.id),
    organisationId: String(r.organisation_id),
    connectionId: String(r.connection_id),
    url: String(r.url),
    events: r.events as string[],
    createdAt: date(r.created_at),
    failingSince: dateOrNull(r.failing_since),
    switchedOffAt: dateOrNull(r.switched_off_at),
    deletedAt: dateOrNull(r.deleted_at),
  });
}

export const DELIVERY_COLUMNS =
  'id, webhook_id, organisation_id, connection_id, outbox_event_id, event, occurred_at, data, is_test, state, series, attempts, ' +
  'next_attempt_at, give_up_reason, created_at, updated_at, finished_at';

export function toDelivery(r: Row): WebhookDeliveryEntity {
  return Object.assign(new WebhookDeliveryEntity(), {
    id: String(r.id),
    webhookId: String(r.webhook_id),
    organisationId: String(r.organisation_id),
    connectionId: String(r.connection_id),
    outboxEventId: (r.outbox_event_id as string | null) ?? null,
    event: String(r.event),
    occurredAt: date(r.occurred_at),
    data: r.data as Record<string, string>,
    isTest: Boolean(r.is_test),
    state: r.state as DeliveryState,
    series: Number(r.series),
    attempts: Number(r.attempts),
    nextAttemptAt: dateOrNull(r.next_attempt_at),
    giveUpReason: (r.give_up_reason as GiveUpReason | null) ?? null,
    createdAt: date(r.created_at),
    updatedAt: date(r.updated_at),
    finishedAt: dateOrNull(r.finished_at),
  });
}

/** An attempt's summary columns (what a page of the log shows), without its exchange. */
export const ATTEMPT_SUMMARY_COLUMNS = 'id, delivery_id, series, number, attempted_at, succeeded, status, duration_ms, error, error_class';

export function toAttempt(r: Row): WebhookDeliveryAttemptEntity {
  return Object.assign(new WebhookDeliveryAttemptEntity(), {
    id: String(r.id),
    deliveryId: String(r.delivery_id),
    series: Number(r.series),
    number: Number(r.number),
    attemptedAt: date(r.attempted_at),
    succeeded: Boolean(r.succeeded),
    status: r.status === null ? null : Number(r.status),
    durationMs: Number(r.duration_ms),
    error: (r.error as string | null) ?? null,
    requestHeaders: (r.request_headers as Headers | null) ?? null,
    responseHeaders: (r.response_headers as Headers | null) ?? null,
    responseBody: (r.response_body as Buffer | null) ?? null,
    responseBodySize: r.response_body_size === null || r.response_body_size === undefined ? null : Number(r.response_body_size),
    responseBodyTruncated: Boolean(r.response_body_truncated),
    errorClass: (r.error_class as ErrorClass | null) ?? null,
  });
}

/**
 * Gives up a webhook's pending deliveries (tests are never pending past their call). An attempt
 * in flight keeps running, but its result cannot move the delivery out of given_up.
 */
export async function giveUpPending(m: EntityManager, webhookId: string, reason: GiveUpReason, now: Date): Promise<number> {
  return affected(
    m,
    `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = $2, next_attempt_at = NULL, finished_at = $3, updated_at = $3
      WHERE webhook_id = $1 AND state IN ('queued', 'waiting')`,
    [webhookId, reason, now.toISOString()],
  );
}

/** Rows changed by an UPDATE or DELETE (TypeORM answers those as `[rows, rowCount]`). */
export async function affected(m: EntityManager, sql: string, params: unknown[]): Promise<number> {
  const [, count] = (await m.query(sql, params)) as [unknown, number];
  return count;
}
