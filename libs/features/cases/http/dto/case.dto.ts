import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA_PATTERN } from '@web/http';

/** A case: opened by a calling system under its own reference; conversations happen in it. */
export class CaseDto {
  @ApiProperty({ example: '42', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: 'CRM-2026-00017', description: "The calling system's own reference, unique in the organisation, as sent." })
  external_ref: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'Housing benefit appointment' })
  title: string | null;

  @ApiProperty({ type: 'string', nullable: true, pattern: ID_SCHEMA_PATTERN, example: '7', description: 'The group that holds the case, if any.' })
  group_id: string | null;

  @ApiProperty({ enum: ['open', 'closed'], description: 'A closed case takes no new conversations. Cases are closed by the platform.' })
  status: 'open' | 'closed';

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the case was closed; null while open.' })
  closed_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-21T09:30:00.000Z',
    description: 'Last change of a field above: reference, title, group, or closing.' + ' Use it with `updated_since` to keep a copy in sync.',
  })
  updated_at: string;
}

/** The address in the platform's member app where a signed-in member starts a conversation in the case. */
export class CaseUrlDto {
  @ApiProperty({ example: '42', pattern: ID_SCHEMA_PATTERN })
  case_id: string;

  @ApiProperty({
    format: 'uri',
    example: 'https://app.example.com/cases/42/conversations/new',
    description: 'https address in the member app; opening it requires the member to be signed in.',
  })
  url: string;
}
