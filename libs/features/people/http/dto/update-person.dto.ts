import { ApiPropertyOptional, IntersectionType, OmitType, PartialType } from '@nestjs/swagger';
import { IsBoolean, ValidateIf } from 'class-validator';
import { ID_SCHEMA_PATTERN } from '@web/http';
import { CreatePersonDto } from './create-person.dto';

/** The one field a person update has that creating one has not. */
class DisabledField {
  @ApiPropertyOptional({ description: 'A disabled person keeps their membership but cannot sign in.' })
  @ValidateIf((_, v) => v !== undefined)
  @IsBoolean()
  disabled?: boolean;
}

/**
 * PersonUpdate: the fields given are changed, the others kept. The create DTO's fields but the
 * address, with its rules (a field may be left out, but null only where create allows it:
 * `skipNullProperties: false` keeps refusing a null name), then `disabled`, in that order (the
 * order 422 messages name fields in).
 */
export class UpdatePersonDto extends IntersectionType(
  PartialType(OmitType(CreatePersonDto, ['email'] as const), { skipNullProperties: false }),
  DisabledField,
) {
  // Only the descriptions differ from create's: what null means here.
  @ApiPropertyOptional({ type: String, nullable: true, example: 'Social worker', maxLength: 200, description: 'Null clears it.' })
  override job_title?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: ID_SCHEMA_PATTERN,
    example: '7',
    description: 'Moves the person into this group of the organisation (null: into no group).',
  })
  override group_id?: string | null;
}
