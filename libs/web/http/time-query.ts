import { DomainError } from '@kernel/core';

/** An ISO 8601 time with its offset (`Z` or `±hh:mm`), to the minute at least. */
export const TIME_PATTERN = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})$';
export const TIME_RULE = { message: '$property must be an ISO 8601 time with its offset, for example 2026-11-27T08:00:00Z' };

/**
 * A time the DTO's pattern let through; one that does not exist (February 30th, 24:00, an offset of
 * +25:00) is refused like a malformed one, and so is one outside the years Postgres takes (year 0000,
 * or 9999-12-31T23:30-01:00, which is in year 10000).
 */
export function parseTime(value: string | undefined, field: string, code: 'invalid_request' | 'validation_failed'): Date | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(value);
  const calendar = m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3])) : null;
  const real =
    m !== null &&
    calendar !== null &&
    calendar.getUTCMonth() === +m[2] - 1 &&
    calendar.getUTCDate() === +m[3] &&
    +m[4] < 24 &&
    +m[5] < 60 &&
    (m[6] === undefined || +m[6] < 60) &&
    (offset === null || (+offset[2] < 24 && +offset[3] < 60));
  const d = new Date(value);
  if (!real || Number.isNaN(d.getTime())) throw new DomainError(code, `${field}: must be an ISO 8601 time with its offset, for example 2026-11-27T08:00:00Z`);
  if (d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) throw new DomainError(code, `${field}: must be a time in the years 0001 to 9999 (UTC)`);
  return d;
}
