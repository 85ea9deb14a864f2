/** Attempts of a delivery in all: the first and seven retries. */
export const MAX_ATTEMPTS = 8;

/** The contract's timetable: delay before attempt 2, 3, … 8, counted from the previous failure. */
export const RETRY_DELAYS_MINUTES: readonly number[] = [1, 5, 30, 120, 360, 720, 1440];

/**
 * How long to wait, after attempt `failed` failed, before the next attempt; null when no further
 * attempt is made (the eighth failed). `scale` shrinks the timetable for tests only (the setting
 * is refused in production); 1 is the contract's.
 */
export function retryDelayMs(failed: number, scale = 1): number | null {
  if (!Number.isInteger(failed) || failed < 1) throw new RangeError(`attempt number must be a positive integer, got ${failed}`);
  if (!(scale > 0 && scale <= 1)) throw new RangeError(`scale must be in (0, 1], got ${scale}`);
  if (failed >= MAX_ATTEMPTS) return null;
  return Math.max(1, Math.round(RETRY_DELAYS_MINUTES[failed - 1] * 60_000 * scale));
}
