import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageRequest } from '@kernel/core';

// One message for every way a limit is wrong, said once (the pipe drops repeats): `limit=1.5`
// must not hear both "must be an integer" and "must not be less than 1".
const LIMIT_RULE = { message: `limit must be an integer from 1 to ${MAX_PAGE_SIZE}` };

/** `limit` and `cursor` of every REST list call (newest first). */
export class PageQueryDto implements PageRequest {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' })
  @IsOptional()
  // Decimal digits only: Number() would also take `0x10`, `1e1` or `100.0`. Anything else stays
  // a string, which @IsInt refuses (400).
  @Transform(({ value }) => (typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value))
  @IsInt(LIMIT_RULE)
  @Min(1, LIMIT_RULE)
  @Max(MAX_PAGE_SIZE, LIMIT_RULE)
  limit?: number;

  // The schema states what decodeCursor checks first (base64url, at most 200 characters).
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 200,
    pattern: '^[A-Za-z0-9_-]+$',
    description: 'The `next_cursor` of the previous page; omit for the first page (an empty `cursor` is refused like one this API did not issue).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
