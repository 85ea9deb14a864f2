import { DomainError } from '@kernel/core';
import { parseTime } from './time-query';

/** A list's time range from its query: both times real, `until` later than `since` (400 `invalid_request` otherwise). */
export function timeRange(since: string | undefined, until: string | undefined): { since?: Date; until?: Date } {
  const from = parseTime(since, 'since', 'invalid_request');
  const to = parseTime(until, 'until', 'invalid_request');
  if (from && to && to.getTime() <= from.getTime()) throw new DomainError('invalid_request', 'until: must be later than since');
  return { since: from, until: to };
}
