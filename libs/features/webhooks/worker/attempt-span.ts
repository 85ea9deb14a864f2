import { DeliveryJob } from '@kernel/queue';
import { inSpan } from '@kernel/telemetry';
import { Job } from 'bullmq';

/**
 * Tracing on: one `webhook attempt` span around an attempt (its Postgres statements and the POST
 * are its children). It is a child, not a link, of the job's BullMQ `process` span, which is a
 * child of the context the job carries (the event's `outbox relay` span, or the attempt that
 * failed before a retry): each job does exactly one delivery for one event, so the attempt belongs
 * in that event's trace; the OpenTelemetry messaging conventions keep links for work done for
 * many messages at once (the relay batch). Tracing off: only `attempt()`.
 */
export function attemptSpan<T extends { kind: string }>(job: Job<DeliveryJob>, attempt: () => Promise<T>): Promise<T> {
  return inSpan(
    'webhook attempt',
    { attributes: { 'webhook.delivery_id': job.data.deliveryId, 'messaging.destination.name': job.queueName } },
    async (span) => {
      const outcome = await attempt();
      span?.setAttribute('webhook.outcome', outcome.kind);
      return outcome;
    },
  );
}
