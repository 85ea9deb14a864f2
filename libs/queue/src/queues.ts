/** Queue names; the worker consumes them, the api and the worker produce. */
export const QUEUES = {
  maintenance: 'maintenance',
  /** First attempts of webhook deliveries (never wait behind retries). */
  webhookDeliveries: 'webhook-deliveries',
  /** Second and later attempts, on the contract's timetable. */
  webhookRetries: 'webhook-retries',
  /** Translation of documents through the configured engine. */
  translations: 'translations',
} as const;

/** Job names of the maintenance queue (scheduled by the worker). */
export const MAINTENANCE_JOBS = {
  sweepIdempotencyKeys: 'sweep-idempotency-keys',
  sweepDeliveries: 'sweep-deliveries',
  switchOffFailingWebhooks: 'switch-off-failing-webhooks',
} as const;

/** Job names of the translations queue. */
export const TRANSLATION_JOBS = {
  translate: 'translate-document',
  /** Scheduled: queues again documents whose job never reached Redis; fails interrupted ones. */
  requeueStale: 'requeue-stale-documents',
} as const;

/** Jobs carry ids only; the payload lives in Postgres (a failing endpoint must not fill Redis). */
export interface DeliveryJob {
  deliveryId: string;
}

export interface TranslationJob {
  documentId: string;
}
