import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { CASE_TITLE_MAX, EXTERNAL_REF_MAX } from '../../cases.service';
import { NOT_BLANK, ID_SCHEMA_PATTERN, IsIdOf } from '@web/http';

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
    pattern: ID_SCHEMA_PATTERN,
    example: '7',
    description: 'A group of this organisation to hold the case (422 validation_failed naming group_id otherwise).',
  })
  @IsOptional()
  @IsIdOf('group_id', 'group')
  group_id?: string | null;
}
