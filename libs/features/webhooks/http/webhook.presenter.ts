import type { CreatedWebhookDto, WebhookDto, WebhookTestResultDto } from './dto/webhook.dto';
import type { TestAnswer } from '../webhook-test.service';
import type { WebhookEntity } from '../webhook.entity';

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
