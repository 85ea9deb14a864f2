/**
 * The Postgres NOTIFY channels, named once, for the migrations and the code that fire them and
 * the worker loops that LISTEN. A notification is delivered when its transaction commits.
 */
export const CHANNELS = {
  /** An event was written to the outbox (the Webhooks migration's trigger); wakes the relay. */
  outboxEvents: 'outbox_events',
  /** A delivery to queue now (a resend; payload: its id). */
  deliveries: 'webhook_deliveries',
  /** A document stored awaiting the translations queue (payload: its id). */
  documentsAwaitingQueue: 'documents_awaiting_queue',
} as const;
