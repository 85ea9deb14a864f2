import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_SECRET_OVERLAP_SECONDS, MAX_SECRET_OVERLAP_SECONDS } from '../../model/secret-rotation';

const OVERLAP_RULE = { message: `must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days)` };

export class RotateSecretDto {
  @ApiProperty({
    maxLength: 200,
    example: 'whsec_…',
    description: "The webhook's signing secret now (`whsec_…`), as shown when it was made; compared in constant time.",
  })
  @IsString()
  @MaxLength(200)
  current_secret: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_SECRET_OVERLAP_SECONDS,
    default: DEFAULT_SECRET_OVERLAP_SECONDS,
    example: DEFAULT_SECRET_OVERLAP_SECONDS,
    description: 'How long the current secret keeps signing beside the new one, in seconds: 0 (it stops at once) to 604800 (7 days); default 86400 (24 hours).',
  })
  @IsOptional()
  @IsInt(OVERLAP_RULE)
  @Min(0, OVERLAP_RULE)
  @Max(MAX_SECRET_OVERLAP_SECONDS, OVERLAP_RULE)
  expires_in_seconds?: number;
}

/** The answer of a rotation: the only one that carries the new secret. */
export class RotatedSecretDto {
  @ApiProperty({ pattern: '^[0-9]+$', example: '42' })
  webhook_id: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'whsec_…',
    description:
      'The new signing secret (`whsec_…`), shown in this answer only: keep it. A replay of the same request with the same ' +
      '`Idempotency-Key` answers `null` here (and `secret_shown` false).',
  })
  secret: string | null;

  @ApiPropertyOptional({ enum: [false], description: 'Present, and false, only in a replay of the rotating request (the secret is not shown again).' })
  secret_shown?: false;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-28T10:00:00.000Z',
    description: 'Until when the replaced secret signs too (each delivery carries both signatures); null when it stopped at once.',
  })
  previous_secret_expires_at: string | null;
}
