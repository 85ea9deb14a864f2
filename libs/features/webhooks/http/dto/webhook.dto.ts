import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { ID_SCHEMA_PATTERN } from '@web/http';

/** A webhook as the read and list answers show it (never its secret). */
export class WebhookDto {
  @ApiProperty({ example: '31', pattern: ID_SCHEMA_PATTERN })
  id: string;

  @ApiProperty({
    example: 'https://hooks.example.com/interpreting',
    description: 'https, port 443, a public address; exactly as sent when the webhook was created.',
  })
  url: string;

  @ApiProperty({ type: String, isArray: true, enum: SUBSCRIBABLE_EVENTS, example: ['conversation.ended', 'summary.ready'] })
  events: string[];

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  created_at: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: null,
    description: 'Set when the webhook was switched off after its deliveries failed for three days; no events are sent to it then, but it can still be tested.',
  })
  switched_off_at: string | null;
}

/** The answer that creates a webhook: the only one that carries the secret. */
export class CreatedWebhookDto extends WebhookDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'whsec_l3Q8m0Zb1yV2c9nT4rK7xW5pA6sD8fG0hJ2kL4zX1cV',
    description:
      'The signing secret (`whsec_…`), shown in this answer only: keep it. A replay of the same request with the same ' +
      '`Idempotency-Key` answers null. Losing it requires removing and re-adding the webhook.',
  })
  secret: string | null;

  @ApiPropertyOptional({ enum: [false], description: 'Present, and false, only in a replay of the creating request (the secret is not shown again).' })
  secret_shown?: false;
}

/** What the test call found. */
export class WebhookTestResultDto {
  @ApiProperty({ example: '5f0c3e8a9b7d4c2e8f1a0b3c5d7e9f21', pattern: '^[0-9a-f]{32}$', description: "Id of the test delivery (the body's `id`)." })
  delivery_id: string;

  @ApiProperty({ description: 'Whether the address answered 2xx within 10 seconds.' })
  delivered: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'The status the address answered with; null when it did not answer.' })
  status: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'What went wrong when it was not delivered (a status, a timeout, a connection or certificate error, an address that is not public); null when delivered.',
  })
  error: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 84, description: 'How long the attempt took, in milliseconds.' })
  duration_ms: number;
}
