/**
 * The console's time fields (the outage form, switching a webhook back on, the provisioning log's
 * range): a time in UTC typed
 * as `2026-01-31 08:00`, the format their hint shows and their value is written in. A text field,
 * not `datetime-local`, whose browsers show the value in the reader's locale (31/01/2026, 08:00),
 * not in the format of the hint. The `T` of ISO 8601 is read as well as the space.
 */

/** The example every hint and message gives; parseSince reads it. */
export const SINCE_EXAMPLE = '2026-01-31 08:00';

/**
 * A time typed as `YYYY-MM-DD HH:MM[:SS]` (or with `T`), read as UTC; null when it is not one:
 * every field in its range (no 25:00, no 31 February), the year from 0001 on, so that whatever it
 * answers is a real time Postgres can compare with a timestamptz column.
 */
export function parseSince(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [+m[1], +m[2], +m[3], +m[4], +m[5], m[6] ? +m[6] : 0];
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day ? null : d;
}

/** A time as the fields show it: `2026-01-31 08:00` (UTC, to the minute). */
export const sinceText = (d: Date): string => d.toISOString().slice(0, 16).replace('T', ' ');

/** What is wrong with a value parseSince refused, in the words of the field's hint. */
export const sinceProblem = (given: string, what = 'the time to send from'): string =>
  given.trim() === '' ? `Enter ${what}, in UTC.` : `Enter ${what} as a date and time in UTC, in the form ${SINCE_EXAMPLE} (year-month-day hours:minutes).`;
