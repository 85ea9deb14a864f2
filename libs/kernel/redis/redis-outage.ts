import type { Logger } from '@nestjs/common';

/**
 * Whether an error means Redis could not be reached (down, restarting, a command timed out), as
 * opposed to a bug: such a call may work if tried again in a few seconds.
 */
export function isRedisUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'MaxRetriesPerRequestError' || err.name === 'RedisUnavailableError') return true;
  return /^(Command timed out|Connection is closed|Stream isn't writeable|connect ECONNREFUSED|read ECONNRESET)/.test(err.message);
}

/** Thrown without sending anything when the connection is not ready: waiting for it is what stalled calls. */
export class RedisUnavailableError extends Error {
  constructor(status: string) {
    super(`Redis is not reachable (connection ${status})`);
    this.name = 'RedisUnavailableError';
  }
}

/**
 * Whether a connection is known to be away: it was lost and ioredis is between reconnection
 * tries, or it was closed. A connection still making its first connection ('wait', 'connecting',
 * 'connect') is not: a command then waits in the offline queue, at most the command timeout, so
 * that a process which has just started (the admin CLI announcing a revoked key) is not refused.
 */
export function isAway(redis: { status: string }): boolean {
  return redis.status === 'reconnecting' || redis.status === 'close' || redis.status === 'end';
}

/** Rejects at once while the connection is away, so no call waits on a Redis that is known to be down. */
export function requireReady(redis: { status: string }): void {
  if (isAway(redis)) throw new RedisUnavailableError(redis.status);
}

/** While Redis is thought away, one call this often tries it (the others do without at once). */
export const REDIS_PROBE_EVERY_MS = 5000;

/**
 * A feature's view of a Redis outage: `mayTry()` is false while the connection is not ready, and
 * after a failure (a Redis that hangs rather than refuses: each try would wait for the command
 * timeout) lets one call in REDIS_PROBE_EVERY_MS try again. The degraded mode is logged once per
 * outage, not once per call (an outage under load would flood the log), and once when it ends.
 */
export class RedisOutage {
  private down = false;
  private lastTry = 0;

  constructor(
    private readonly redis: { status: string },
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    private readonly degraded: string,
    private readonly restored: string,
  ) {}

  mayTry(): boolean {
    if (isAway(this.redis)) {
      this.failed(new RedisUnavailableError(this.redis.status));
      return false;
    }
    if (!this.down) return true;
    const now = Date.now();
    if (now - this.lastTry < REDIS_PROBE_EVERY_MS) return false;
    this.lastTry = now;
    return true;
  }

  failed(err: unknown): void {
    this.lastTry = Date.now();
    if (this.down) return;
    this.down = true;
    this.logger.warn(`Redis is unreachable (${(err as Error)?.message ?? String(err)}): ${this.degraded} until it is back`);
  }

  worked(): void {
    if (!this.down) return;
    this.down = false;
    this.logger.log(`Redis is reachable again: ${this.restored}`);
  }
}
