import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA_PATTERN } from '@web/http';

export const INVITATION_STATUSES = ['pending', 'expired', 'accepted', 'withdrawn'] as const;

/** An invitation to join the organisation, sent by email with an accept link. */
export class InvitationDto {
  @ApiProperty({ example: '15', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({ example: 'sam.okafor@partner.example' })
  email: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'Sam Okafor',
    description: 'The name given when inviting; the person may type another when accepting.',
  })
  name: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'Interpreter coordinator' })
  job_title: string | null;

  @ApiProperty({ type: String, nullable: true, pattern: ID_SCHEMA_PATTERN, example: '7', description: 'The group the person joins on accepting.' })
  group_id: string | null;

  @ApiProperty({
    enum: INVITATION_STATUSES,
    example: 'pending',
    description:
      '`pending`: waiting for an answer; `expired`: not answered before `expires_at` (adding the address again replaces it). ' +
      'Lists show only these two; `accepted` and `withdrawn` invitations are no longer listed.',
  })
  status: (typeof INVITATION_STATUSES)[number];

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-05T09:30:00.000Z', description: 'The accept link stops working at this time.' })
  expires_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-21T09:30:00.000Z',
    description:
      'Last change of the invitation: made, its name, job title or group changed, or `expires_at` passed (then it is `expires_at`). ' +
      'Once accepted or withdrawn it is no longer listed.' +
      ' Use it with `updated_since` to keep a copy in sync.',
  })
  updated_at: string;
}
