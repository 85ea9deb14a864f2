import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, TransformFnParams } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsNotEmpty, IsString, MaxLength, ValidateIf } from 'class-validator';
import { NOT_BLANK } from '@web/http';

const trim = ({ value }: TransformFnParams): unknown => (typeof value === 'string' ? value.trim() : value);
const NAME_DOC = 'Unique in the organisation, ignoring case (else 422 `validation_failed` naming `name`); surrounding spaces are dropped.';
const CODES_DOC =
  'Permission codes (see `GET /v1/permissions`). An unknown code answers 422 `unknown_permission`; a code that is not grantable, added or taken away, answers 403 `permission_not_grantable`.';

export class CreateGroupDto {
  @ApiProperty({ minLength: 1, maxLength: 100, pattern: NOT_BLANK, example: 'Interpreters', description: NAME_DOC })
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name: string;

  @ApiPropertyOptional({ type: String, isArray: true, maxItems: 50, example: ['conversations.start'], description: `${CODES_DOC} Default: none.` })
  // Not @IsOptional: an explicit null is refused rather than read as "absent".
  @ValidateIf((o: CreateGroupDto) => o.permissions !== undefined)
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  permissions?: string[];
}

export class UpdateGroupDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100, pattern: NOT_BLANK, example: 'Senior interpreters', description: NAME_DOC })
  @ValidateIf((o: UpdateGroupDto) => o.name !== undefined)
  @Transform(trim)
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  name?: string;

  @ApiPropertyOptional({
    type: String,
    isArray: true,
    maxItems: 50,
    example: ['conversations.start', 'people.manage'],
    description: `Replaces the list. ${CODES_DOC}`,
  })
  @ValidateIf((o: UpdateGroupDto) => o.permissions !== undefined)
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  permissions?: string[];
}

export class SetPermissionsDto {
  @ApiProperty({
    type: String,
    isArray: true,
    maxItems: 50,
    example: ['conversations.start', 'people.manage'],
    description: `The whole new list. ${CODES_DOC}`,
  })
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  permissions: string[];
}

export class AddPermissionDto {
  @ApiProperty({ example: 'documents.send', maxLength: 100, description: `The code to add; one the group holds already changes nothing. ${CODES_DOC}` })
  @IsString()
  @IsNotEmpty()
  @MaxLength(100)
  code: string;
}
