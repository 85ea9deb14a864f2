/**
 * The metrics catalogue: every metric this service exports, its labels and what each means, in one
 * place (the table of docs/operations/metrics.md, the Grafana dashboard and the alert rules use these names).
 * Labels take values from closed sets only (a route template, a status code, an event name, a
 * queue name, a reason from a fixed list): never an id, a raw path, an address or a message, so the
 * number of series stays bounded whatever the traffic.
 */

export interface MetricDef<L extends string = string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}

export interface HistogramDef<L extends string = string> extends MetricDef<L> {
  buckets: number[];
}

const def = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): MetricDef<L> => ({ name, help, labelNames });
const hist = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): HistogramDef<L> => ({
  name,
  help,
  labelNames,
  buckets,
});

/** Seconds: from a cached-key call (a millisecond) to a 10 MB upload or a slow SCIM page. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: an attempt is cut at 10 s. */
const ATTEMPT_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: a translation may take minutes for a large document. */
const TRANSLATION_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** Counters and histograms, recorded as things happen. */
export const METRICS = {
  // api
  httpRequestDuration: hist(
    'integrations_http_request_duration_seconds',
    'Requests answered by the api, by method, route template (unmatched for a path no route serves) and status code.',
    ['method', 'route', 'status'] as const,
    REQUEST_BUCKETS,
  ),
  refusedKeys: def(
    'integrations_refused_keys_total',
    'Calls refused by the key check, by reason: missing, malformed, unknown, revoked (401); several_headers (400); throttled (429); ip_not_allowed, module_off, scope_missing (403).',
    ['reason'] as const,
  ),
  rateLimited: def('integrations_rate_limited_total', "Calls of admitted keys refused 429 by their connection's rate limit, by policy (rest, scim).", [
    'policy',
  ] as const),
  idempotencyRequests: def(
    'integrations_idempotency_requests_total',
    'Calls carrying an Idempotency-Key, by outcome: first (handled), replayed (the stored answer), in_use (409), reused (422).',
    ['outcome'] as const,
  ),
  scimOperations: def(
    'integrations_scim_operations_total',
    'SCIM requests, by resource (Users, Groups, discovery), operation (list, get, create, replace, patch, delete) and outcome (success, client_error, server_error).',
    ['resource', 'operation', 'outcome'] as const,
  ),
  provisioningLogFailures: def(
    'integrations_provisioning_log_failures_total',
    'Provisioning log rows not written, by outcome: succeeded (the change was made again without its row), refused (the refusal was answered, not logged).',
    ['outcome'] as const,
  ),
  // webhooks (the worker; the api for test calls)
  webhookAttempts: def(
    'integrations_webhook_attempts_total',
    'Webhook delivery attempts sent, by event and outcome: success (2xx), http_error (another status), no_answer (no connection, TLS error, timeout).',
    ['event', 'outcome'] as const,
  ),
  webhookAttemptDuration: hist(
    'integrations_webhook_attempt_duration_seconds',
    'Duration of webhook delivery attempts (the POST, up to its 10 s limit), by outcome.',
    ['outcome'] as const,
    ATTEMPT_BUCKETS,
  ),
  webhookDeliveries: def(
    'integrations_webhook_deliveries_total',
    'Webhook deliveries that ended, by event and outcome: delivered, failed (no attempt left), given_up (a check before an attempt failed).',
    ['event', 'outcome'] as const,
  ),
  webhookParked: def(
    'integrations_webhook_deliveries_parked_total',
    'Deliveries made to wait, without a worker slot, because their webhook had WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK attempts in flight (fair delivery).',
  ),
  outboxRelayed: def('integrations_outbox_relayed_events_total', 'Outbox events relayed into deliveries by this worker.'),
  // documents (the worker)
  translationJobs: def(
    'integrations_translation_jobs_total',
    'Translation jobs run, by outcome: translated, failed (the document ends failed), retried (the engine failed in a way worth retrying), skipped (nothing to do).',
    ['outcome'] as const,
  ),
  translationJobDuration: hist(
    'integrations_translation_job_duration_seconds',
    'Duration of translation jobs, by outcome.',
    ['outcome'] as const,
    TRANSLATION_BUCKETS,
  ),
} as const;

/** The outbox backlog is counted up to this many rows, so a scrape stays cheap however large it grows. */
export const OUTBOX_BACKLOG_CAP = 100_000;

/** Gauges read when Prometheus scrapes (the worker), from Redis and Postgres. */
export const GAUGES = {
  queueJobs: def('integrations_queue_jobs', 'Jobs in each BullMQ queue, by state (waiting, active, delayed, prioritized, failed).', [
    'queue',
    'state',
  ] as const),
  queueOldestWaitingAge: def(
    'integrations_queue_oldest_waiting_age_seconds',
    'Seconds since the job that has waited longest for a worker became due (added, or its delay ended); 0 when none waits.',
    ['queue'] as const,
  ),
  outboxBacklog: def('integrations_outbox_backlog', `Outbox events not yet relayed (counted up to ${OUTBOX_BACKLOG_CAP}).`),
  outboxRelayLag: def('integrations_outbox_relay_lag_seconds', 'Age of the oldest outbox event not yet relayed; 0 when none waits.'),
  collectorUp: def(
    'integrations_metrics_collector_up',
    'Whether the scrape-time collector could read its source this scrape (1) or not (0: its gauges are left out), by collector (queues, outbox).',
    ['collector'] as const,
  ),
} as const;

export type LabelsOf<D> = D extends MetricDef<infer L> ? L : never;
