import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { EMAIL_PATTERN } from '@kernel/core';
import { NOT_BLANK, ID_SCHEMA_PATTERN, IsIdOf } from '@web/http';

/** PersonCreate: adds a person by address (see the operation for the rule). */
export class CreatePersonDto {
  @ApiProperty({
    example: 'ana.lopez@example.org',
    format: 'email',
    maxLength: 254,
    pattern: EMAIL_PATTERN,
    description: 'The address (a dot-atom local part of at most 64 characters); its domain is compared case-insensitively.',
  })
  @IsString()
  @MaxLength(254)
  email: string;

  @ApiPropertyOptional({ example: 'Ana López', minLength: 1, maxLength: 200, pattern: NOT_BLANK })
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'Social worker', maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  job_title?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: ID_SCHEMA_PATTERN,
    example: '7',
    description: 'A group of this organisation (else 422); a group carrying a permission the API cannot grant answers 403 permission_not_grantable.',
  })
  @IsOptional()
  @IsIdOf('group_id', 'group')
  group_id?: string | null;
}
