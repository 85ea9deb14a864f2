import { Logger } from '@nestjs/common';

const QUIET_MS = 60_000;

/**
 * BullMQ emits 'error' on queues and workers for every failed reconnect while Redis is away, and
 * prints each one with its stack (console.error) when nobody listens: an outage would flood the
 * log. One warning a minute per queue or worker instead, with the number left out.
 */
export function logBullErrors(emitter: { on(event: 'error', listener: (err: Error) => void): unknown }, name: string): void {
  const logger = new Logger(name);
  let last = 0;
  let quiet = 0;
  emitter.on('error', (err: Error) => {
    const now = Date.now();
    if (now - last < QUIET_MS) {
      quiet++;
      return;
    }
    logger.warn(`${err.message}${quiet > 0 ? ` (${quiet} more errors in the last minute not logged)` : ''}`);
    last = now;
    quiet = 0;
  });
}

/** How soon a worker whose loop failed (Redis away) tries again; BullMQ's 15 s default delayed every job that long after an outage. */
export const WORKER_RUN_RETRY_MS = 2000;

/** A worker's outage behaviour: its errors logged once a minute, its loop back within WORKER_RUN_RETRY_MS of Redis. */
export function superviseWorker(worker: { on(event: 'error', listener: (err: Error) => void): unknown; opts: { runRetryDelay?: number } }, name: string): void {
  logBullErrors(worker, `Worker ${name}`);
  worker.opts.runRetryDelay = WORKER_RUN_RETRY_MS;
}
