import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageRequest } from '@app/domain';

/** `limit` and `cursor` of every REST list call (newest first). */
export class PageQueryDto implements PageRequest {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Page size.' })
  @IsOptional()
  // Decimal digits only: Number() would also take `0x10`, `1e1` or `100.0`. Anything else stays
  // a string, which @IsInt refuses (400).
  @Transform(({ value }) => (typeof value === 'string' && /^[0-9]{1,6}$/.test(value) ? Number(value) : value))
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The `next_cursor` of the previous page; omit for the first page.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
