import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA_PATTERN } from '@web/http';

/** A member of the organisation (an account in it). */
export class PersonDto {
  @ApiProperty({ example: '42', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: 'ana.lopez@example.org', description: 'The address of the account; one account per address platform-wide.' })
  email: string;

  @ApiProperty({ example: 'Ana López', description: 'Empty when the person has not given a name yet.' })
  name: string;

  @ApiProperty({ type: String, nullable: true, example: 'Social worker' })
  job_title: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    pattern: ID_SCHEMA_PATTERN,
    example: '7',
    description: "The person's group: a person is in at most one group, and a group's members are the people whose group_id is the group. Null: in no group.",
  })
  group_id: string | null;

  @ApiProperty({ description: 'A disabled person cannot sign in and does not count as a people manager.' })
  disabled: boolean;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z', description: 'When the person joined this organisation; lists are ordered by it.' })
  joined_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z', description: 'When the account was made (it may predate joining).' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-21T09:30:00.000Z',
    description:
      'Last change of a field above: address, name, job title, group, disabled, or joining.' + ' Use it with `updated_since` to keep a copy in sync.',
  })
  updated_at: string;
}
