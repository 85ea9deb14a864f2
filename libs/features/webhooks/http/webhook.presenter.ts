import type { CreatedWebhookDto, WebhookDto, WebhookTestResultDto } from './dto/webhook.dto';
import type { TestAnswer } from '../webhook-test.service';
import type { WebhookEntity } from '../webhook.entity';
import type { AttemptDto, AttemptSummaryDto, DeliveryDetailDto, DeliveryDto } from './dto/delivery.dto';
import type { WebhookDeliveryAttemptEntity } from '../webhook-delivery-attempt.entity';
import type { WebhookDeliveryEntity } from '../webhook-delivery.entity';
import { LoggedDelivery, sentBody } from '../delivery-log.service';
import { bodyText, headerValue } from '../model/exchange';

export const presentWebhook = (w: WebhookEntity): WebhookDto => ({
  id: w.id,
  url: w.url,
  events: w.events,
  created_at: w.createdAt.toISOString(),
  switched_off_at: w.switchedOffAt?.toISOString() ?? null,
});

export const presentCreatedWebhook = (w: WebhookEntity, secret: string): CreatedWebhookDto => {
  const { id, url, events, created_at, switched_off_at } = presentWebhook(w);
  return { id, url, events, secret, created_at, switched_off_at };
};

/** A replay of the creating request: the same webhook, the secret not shown again. */
export const hideSecret = (body: unknown): unknown => {
  const b = body as { data: CreatedWebhookDto };
  return { data: { ...b.data, secret: null, secret_shown: false } };
};

export const presentTest = (t: TestAnswer): WebhookTestResultDto => ({
  delivery_id: t.deliveryId,
  delivered: t.delivered,
  status: t.status,
  error: t.error,
  duration_ms: t.durationMs,
});

const iso = (d: Date | null) => d?.toISOString() ?? null;

const presentAttemptSummary = (a: WebhookDeliveryAttemptEntity): AttemptSummaryDto => ({
  series: a.series,
  number: a.number,
  attempted_at: a.attemptedAt.toISOString(),
  succeeded: a.succeeded,
  status: a.status,
  duration_ms: a.durationMs,
  error: a.error,
  error_class: a.errorClass,
});

export const presentDelivery = (d: WebhookDeliveryEntity, last: WebhookDeliveryAttemptEntity | undefined): DeliveryDto => ({
  id: d.id,
  webhook_id: d.webhookId,
  event: d.event,
  occurred_at: d.occurredAt.toISOString(),
  created_at: d.createdAt.toISOString(),
  state: d.state,
  give_up_reason: d.giveUpReason,
  test: d.isTest,
  series: d.series,
  attempts_in_series: d.attempts,
  next_attempt_at: iso(d.nextAttemptAt),
  finished_at: iso(d.finishedAt),
  last_attempt: last ? presentAttemptSummary(last) : null,
});

export const presentListed = (l: LoggedDelivery): DeliveryDto => presentDelivery(l.delivery, l.attempts[l.attempts.length - 1]);

export const presentAttempt = (a: WebhookDeliveryAttemptEntity): AttemptDto => {
  let response: AttemptDto['response'] = null;
  if (a.responseHeaders) {
    const body = a.responseBody ?? Buffer.alloc(0);
    const text = bodyText(body, headerValue(a.responseHeaders, 'content-type'), a.responseBodyTruncated);
    response = {
      headers: a.responseHeaders,
      body: text,
      body_base64: text === null && body.length > 0 ? body.toString('base64') : null,
      body_size: a.responseBodySize,
      body_truncated: a.responseBodyTruncated,
    };
  }
  return { ...presentAttemptSummary(a), request: a.requestHeaders ? { headers: a.requestHeaders } : null, response };
};

export const presentDeliveryDetail = (l: LoggedDelivery): DeliveryDetailDto => ({
  ...presentListed(l),
  body: sentBody(l.delivery),
  attempts: l.attempts.map(presentAttempt),
});
