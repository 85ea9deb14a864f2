import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageRequest } from '@kernel/core';
import { parseTime, TIME_PATTERN, TIME_RULE } from '../time-query';
import { PageQueryDto } from './page-query.dto';

/** What the description says of `updated_since` on every list that takes it. */
export const UPDATED_SINCE_RULES =
  'Only items whose `updated_at` is at or after this time (inclusive); the order and the cursor rules stay. ' +
  'A cursor is valid only with the `updated_since` of the page that gave it. ' +
  'To keep a copy in sync without gaps: walk the whole list with `updated_since` (the first time `1970-01-01T00:00:00Z`), ' +
  'store each item by `id`, keep the highest `updated_at` seen, then walk again from it (the same time, inclusive); ' +
  'the items that come back again replace themselves. ' +
  'Every page of a walk shows only changes made before the walk began, and a change still being written then ' +
  'is held back to the next walk, so no change is ever skipped whatever order writes finish in. ' +
  'Removed items (a person taken out of the organisation, a group deleted, an invitation answered or withdrawn) ' +
  'no longer appear in the list: a full walk without `updated_since` shows which ids remain.';

/** The sentence each list's description ends with. */
export const SYNC_LIST_NOTE =
  ' With `updated_since`, only the items changed at or after that time, in the same order (its description says how to keep a copy in sync).';

/** `limit`, `cursor` and `updated_since`: the lists a partner keeps a copy of. */
export class SyncPageQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    example: '2026-11-27T08:00:00.000Z',
    description: UPDATED_SINCE_RULES,
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  updated_since?: string;
}

/** The page a list call asked for, `updated_since` parsed (a time that does not exist is 400 invalid_request). */
export function syncPageRequest(q: SyncPageQueryDto): PageRequest {
  const updatedSince = parseTime(q.updated_since, 'updated_since', 'invalid_request');
  return { limit: q.limit, cursor: q.cursor, ...(updatedSince ? { updatedSince } : {}) };
}
