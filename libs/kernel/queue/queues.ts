import type { JobsOptions } from 'bullmq';

/**
 * The queue catalogue: every queue, its job names and their default options, in one place. Each
 * queue has one producer: the webhook queues DeliveryQueues (worker), the translations queue
 * TranslationQueue (the documents feature), the maintenance queue the schedules table (schedules.ts).
 */

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
  sweepProvisioningEvents: 'sweep-provisioning-events',
  warnScimRefusals: 'warn-scim-refusals',
} as const;

/** Job names of the translations queue. */
export const TRANSLATION_JOBS = {
  translate: 'translate-document',
  /** Scheduled: queues again documents whose job never reached Redis; fails interrupted ones. */
  requeueStale: 'requeue-stale-documents',
} as const;

/** Job names of the two webhook queues (one job per delivery, its id the delivery id). */
export const WEBHOOK_JOBS = {
  deliver: 'deliver',
} as const;

/** The custom backoff that makes BullMQ's retries follow the contract's timetable (the worker registers it). */
export const WEBHOOK_BACKOFF = 'webhook-timetable';

/**
 * Options of every delivery job. Postgres holds the payload and the log, so finished jobs leave
 * Redis at once (a failing endpoint must not fill it) and their id is free for a resend's new series.
 */
export const DELIVERY_JOB_OPTIONS: JobsOptions = { removeOnComplete: true, removeOnFail: true, stackTraceLimit: 0, backoff: { type: WEBHOOK_BACKOFF } };
/** A first attempt's job is tried this often for unexpected errors; what is still lost is the recovery's. */
export const FIRST_ATTEMPT_JOB_ATTEMPTS = 3;
/** A ceiling only: Postgres decides when a delivery has had its eight. */
export const RETRY_JOB_ATTEMPTS = 50;

/**
 * One job per document. The creation time is part of it so that a database whose ids start over
 * (restored, recreated) never meets the job of an older document with the same id still kept in
 * Redis; the prefix because BullMQ refuses ids that look like integers.
 */
export const translationJobId = (documentId: string, createdAt: Date): string => `document-${documentId}-${createdAt.getTime()}`;

/** Options of a translation job, with the documents' retry policy. */
export const translationJobOptions = (documentId: string, createdAt: Date, retry: { attempts: number; backoffMs: number }): JobsOptions => ({
  jobId: translationJobId(documentId, createdAt),
  attempts: retry.attempts,
  backoff: { type: 'exponential', delay: retry.backoffMs },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
});

/** Jobs carry ids only; the payload lives in Postgres (a failing endpoint must not fill Redis). */
export interface DeliveryJob {
  deliveryId: string;
  /**
   * Set by the retry processor when it delays the job (ms since the epoch): when it is due again.
   * BullMQ forgets a delay once it ends; the queue-age metric reads this instead.
   */
  dueAt?: number;
}

export interface TranslationJob {
  documentId: string;
}
