import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { NOT_BLANK } from '../../common/api-docs';
import { ID_SCHEMA_PATTERN, IsIdOf } from '../../common/id-docs';

/** PersonUpdate: the fields given are changed, the others kept. */
export class UpdatePersonDto {
  @ApiPropertyOptional({ example: 'Ana López', minLength: 1, maxLength: 200, pattern: NOT_BLANK })
  @ValidateIf((_, v) => v !== undefined)
  @IsString()
  @Matches(/\S/, { message: 'name must not be blank' })
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: String, nullable: true, example: 'Social worker', maxLength: 200, description: 'Null clears it.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  job_title?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: ID_SCHEMA_PATTERN,
    example: '7',
    description: 'Moves the person into this group of the organisation (null: into no group).',
  })
  @IsOptional()
  @IsIdOf('group_id', 'group')
  group_id?: string | null;

  @ApiPropertyOptional({ description: 'A disabled person keeps their membership but cannot sign in.' })
  @ValidateIf((_, v) => v !== undefined)
  @IsBoolean()
  disabled?: boolean;
}
