import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { ID_PATTERN } from '@app/core';
import { CASE_TITLE_MAX, EXTERNAL_REF_MAX } from '@app/domain';
import { NOT_BLANK } from '../../common/api-docs';

/** CaseCreate: the same `external_ref` again answers the existing case. */
export class CreateCaseDto {
  @ApiProperty({
    minLength: 1,
    maxLength: EXTERNAL_REF_MAX,
    pattern: NOT_BLANK,
    example: 'CRM-2026-00017',
    description: 'Your own reference for the case, unique in the organisation; kept exactly as sent (not trimmed), not blank.',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(EXTERNAL_REF_MAX)
  @Matches(/\S/, { message: 'external_ref must not be blank' })
  external_ref: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, maxLength: CASE_TITLE_MAX, example: 'Housing benefit appointment' })
  @IsOptional()
  @IsString()
  @MaxLength(CASE_TITLE_MAX)
  title?: string | null;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    pattern: '^[0-9]+$',
    example: '7',
    description: 'A group of this organisation to hold the case (422 validation_failed naming group_id otherwise).',
  })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'group_id must be a group id (a string of digits)' })
  group_id?: string | null;
}
