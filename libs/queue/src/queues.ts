/** Queue names; the worker consumes them, the api and the worker produce. */
export const QUEUES = {
  maintenance: 'maintenance',
} as const;

/** Job names of the maintenance queue (scheduled by the worker). */
export const MAINTENANCE_JOBS = {
  sweepIdempotencyKeys: 'sweep-idempotency-keys',
} as const;
