import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA_PATTERN } from '@web/http';

/** A group of the organisation: a name and the permission codes its members hold. */
export class GroupDto {
  @ApiProperty({ example: '12', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: 'Interpreters', minLength: 1, maxLength: 100, description: 'Unique in the organisation, ignoring case.' })
  name: string;

  @ApiProperty({
    type: String,
    isArray: true,
    example: ['conversations.start', 'documents.send'],
    description: 'Permission codes the group grants its members, sorted. `GET /v1/permissions` lists the codes.',
  })
  permissions: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-21T09:30:00.000Z',
    description:
      'Last change of the name, the permissions or the members (a person joining, leaving or moving to another group).' +
      ' Use it with `updated_since` to keep a copy in sync.',
  })
  updated_at: string;
}

/** `{data: [code...]}`: the group's permission codes after the call. */
export class PermissionCodesDto {
  @ApiProperty({ type: String, isArray: true, example: ['conversations.start', 'people.manage'], description: "The group's permission codes, sorted." })
  data: string[];
}
