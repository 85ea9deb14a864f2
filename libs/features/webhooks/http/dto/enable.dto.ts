import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { TIME_PATTERN, TIME_RULE } from '@web/http';
import { WebhookDto } from './webhook.dto';

/** The body of POST /v1/webhooks/{id}/enable: optional, as is its one field. */
export class EnableWebhookDto {
  @ApiPropertyOptional({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    example: '2026-11-24T08:00:00Z',
    description:
      'Also send again the deliveries made at or after this time that were given up (a new series under their own id). ' +
      'Not in the future, and within the last 90 days.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  recover_since?: string;
}

/** What the given-up deliveries' resend did. */
export class EnableRecoveryDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 37, description: 'Given-up deliveries that started a new series now.' })
  resent: number;

  @ApiProperty({
    description:
      'True when more given-up deliveries since `recover_since` remain (at most 500 are sent per request): ' +
      'send the rest with `POST /v1/webhooks/{id}/recover` and the same `since`.',
  })
  more: boolean;
}

/** The answer of POST /v1/webhooks/{id}/enable: the contract's webhook object, unchanged, and what was done. */
export class EnableResultDto {
  @ApiProperty({ type: WebhookDto, description: 'The webhook as `GET /v1/webhooks/{id}` shows it now (`switched_off_at` null).' })
  webhook: WebhookDto;

  @ApiProperty({ description: 'True when this request switched the webhook back on; false when it was not switched off (nothing changed).' })
  switched_on: boolean;

  @ApiProperty({
    type: EnableRecoveryDto,
    nullable: true,
    description: 'The given-up deliveries sent again; null without `recover_since`, or when the webhook was not switched off.',
  })
  recovery: EnableRecoveryDto | null;
}
