import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { ID_SCHEMA_PATTERN, PageQueryDto, TIME_PATTERN, TIME_RULE } from '@web/http';
import { IDENTITY_PROVIDERS, PROVISIONING_OPERATIONS, PROVISIONING_OUTCOMES, PROVISIONING_RESOURCE_TYPES } from '../../model/provisioning-event';

/** The query of GET /v1/provisioning-events. */
export class ProvisioningEventListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: PROVISIONING_OUTCOMES, description: 'Only changes made (`succeeded`) or only refusals (`refused`).' })
  @IsOptional()
  @IsIn([...PROVISIONING_OUTCOMES], { message: `outcome must be one of: ${PROVISIONING_OUTCOMES.join(', ')}` })
  outcome?: string;

  @ApiPropertyOptional({
    enum: PROVISIONING_RESOURCE_TYPES,
    description: 'Only events about Users, about Groups, or (`other`) refusals on another SCIM path (discovery, an unknown path).',
  })
  @IsOptional()
  @IsIn([...PROVISIONING_RESOURCE_TYPES], { message: `resource_type must be one of: ${PROVISIONING_RESOURCE_TYPES.join(', ')}` })
  resource_type?: string;

  @ApiPropertyOptional({ format: 'date-time', pattern: TIME_PATTERN, maxLength: 40, description: 'Only events at or after this time.' })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  since?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    description: 'Only events before this time; later than `since` when both are given.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  until?: string;
}

/** Any JSON value an attribute may hold, or null. */
const ANY_VALUE: { oneOf: SchemaObject[] } = {
  oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }, { type: 'array', items: {} }, { type: 'object' }, { type: 'null' }],
};

/** One attribute a write changed. */
export class AttributeChangeDto {
  @ApiProperty({
    example: 'name.givenName',
    description:
      'The attribute: a top-level name (`title`, `active`, `emails`), a sub-attribute (`name.givenName`), or the enterprise extension’s (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department`).',
  })
  attribute: string;

  @ApiProperty({
    ...ANY_VALUE,
    example: 'Ana',
    description:
      'Its value before (null: it had none, or the resource was created). A value whose JSON is over 300 characters is that JSON cut, ending in `…`.',
  })
  old: unknown;

  @ApiProperty({ ...ANY_VALUE, example: 'Anna', description: 'Its value after (null: it has none now, or the resource was deleted); cut as `old` is.' })
  new: unknown;
}

/** The members a group write added and removed. */
export class MemberChangesDto {
  @ApiProperty({ type: String, isArray: true, example: ['1042'], description: 'SCIM ids of the Users added, as the client asked (the first 100).' })
  added: string[];

  @ApiProperty({ type: String, isArray: true, example: ['977'], description: 'SCIM ids of the Users removed, as the client asked (the first 100).' })
  removed: string[];

  @ApiProperty({ type: 'integer', minimum: 0, example: 1, description: 'How many were added in all.' })
  added_total: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 1, description: 'How many were removed in all.' })
  removed_total: number;
}

/** What a write changed. */
export class ProvisioningChangesDto {
  @ApiProperty({
    type: AttributeChangeDto,
    isArray: true,
    description: 'The attributes changed, old → new, sorted by name (the first 40). Never a password: the service keeps none.',
  })
  attributes: AttributeChangeDto[];

  @ApiProperty({ type: 'integer', minimum: 0, example: 1, description: 'How many attributes changed in all (0: the write changed nothing).' })
  attributes_total: number;

  @ApiPropertyOptional({ type: MemberChangesDto, description: 'Groups only, when the write set members.' })
  members?: MemberChangesDto;
}

/** One entry of the provisioning log. */
export class ProvisioningEventDto {
  @ApiProperty({ example: '5120', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-27T08:01:02.345Z',
    description: 'When the request was answered; the list’s order and time range use it.',
  })
  occurred_at: string;

  @ApiProperty({ example: '12', pattern: ID_SCHEMA_PATTERN, description: 'The connection whose key made the request.' })
  connection_id: string;

  @ApiProperty({ example: 'Okta provisioning', description: 'Its name.' })
  connection_name: string;

  @ApiProperty({
    enum: IDENTITY_PROVIDERS,
    example: 'okta',
    description: 'As far as the User-Agent tells: `okta`, `entra` (Microsoft Entra ID, formerly Azure AD), `other`.',
  })
  identity_provider: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Okta SCIM Client 1.0.0',
    description: 'The User-Agent sent (its first 200 characters); null when none.',
  })
  user_agent: string | null;

  @ApiProperty({
    enum: PROVISIONING_OPERATIONS,
    example: 'update',
    description: '`create` (POST), `replace` (PUT), `update` (PATCH), `delete` (DELETE); `read` (GET) and `search` (POST …/.search) appear only refused.',
  })
  operation: string;

  @ApiProperty({ enum: PROVISIONING_RESOURCE_TYPES, example: 'User' })
  resource_type: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '1042',
    description: 'The SCIM id of the User or Group; null for a create refused, a list or a search.',
  })
  resource_id: string | null;

  @ApiProperty({ enum: PROVISIONING_OUTCOMES, example: 'succeeded' })
  outcome: string;

  @ApiProperty({ type: 'integer', example: 200, description: 'The HTTP status answered.' })
  status: number;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'The SCIM `scimType` of a refusal, when it had one (`uniqueness`, `invalidValue`, `noTarget`, …).',
  })
  scim_type: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'The SCIM `detail` of a refusal (its first 500 characters); null when it succeeded.',
  })
  detail: string | null;

  @ApiProperty({ type: ProvisioningChangesDto, nullable: true, description: 'What a write that succeeded changed; null for a refusal.' })
  changes: ProvisioningChangesDto | null;

  @ApiProperty({ type: String, nullable: true, example: '0f5c9c8e-2f7a-4c1e-9d55-0a3d1c6e8b21', description: 'The request’s `X-Request-Id`.' })
  request_id: string | null;
}
