import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { EVENT_NAMES } from '@kernel/events';
import { ID_SCHEMA_PATTERN, PageQueryDto, TIME_PATTERN, TIME_RULE } from '@web/http';
import { DELIVERY_STATES } from '../../delivery-log.service';
import { ERROR_CLASSES } from '../../model/exchange';
import { GIVE_UP_REASONS } from '../../model/give-up';

export { TIME_PATTERN, TIME_RULE };

const DELIVERY_ID_PATTERN = '^[0-9a-f]{32}$';

const STATE_WORDS =
  '`queued` (its first attempt is on its way), `waiting` (for its next attempt, on the retry timetable), `delivered` (answered 2xx), ' +
  '`failed` (the eighth attempt failed, or a test failed; no further attempt), `given_up` (stopped before an attempt, with `give_up_reason`).';

/** The query of GET /v1/webhooks/{id}/deliveries. */
export class DeliveryListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATES, description: `Only deliveries in this state: ${STATE_WORDS}` })
  @IsOptional()
  @IsIn([...DELIVERY_STATES], { message: `state must be one of: ${DELIVERY_STATES.join(', ')}` })
  state?: string;

  @ApiPropertyOptional({ enum: EVENT_NAMES, description: 'Only deliveries of this event.' })
  @IsOptional()
  @IsIn([...EVENT_NAMES], { message: `event must be one of: ${EVENT_NAMES.join(', ')}` })
  event?: string;

  @ApiPropertyOptional({ format: 'date-time', pattern: TIME_PATTERN, maxLength: 40, description: 'Only deliveries made at or after this time.' })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  since?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    description: 'Only deliveries made before this time; later than `since` when both are given.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  until?: string;
}

/** The body of POST /v1/webhooks/{id}/recover. */
export class RecoverDeliveriesDto {
  @ApiProperty({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    example: '2026-11-27T06:00:00Z',
    description: 'Deliveries made at or after this time.',
  })
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  since: string;

  @ApiPropertyOptional({
    format: 'date-time',
    pattern: TIME_PATTERN,
    maxLength: 40,
    example: '2026-11-27T09:30:00Z',
    description: 'Deliveries made before this time (default: no end); later than `since`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(40)
  @Matches(new RegExp(TIME_PATTERN), TIME_RULE)
  until?: string;
}

/** The last attempt of a delivery, as a page of the log shows it. */
export class AttemptSummaryDto {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1, description: 'The series of attempts it belongs to (a resend starts a new one).' })
  series: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 8, example: 2, description: 'Its number in its series.' })
  number: number;

  @ApiProperty({ format: 'date-time', example: '2026-11-27T08:01:02.345Z' })
  attempted_at: string;

  @ApiProperty({ description: 'Whether the address answered 2xx within 10 seconds.' })
  succeeded: boolean;

  @ApiProperty({ type: Number, nullable: true, example: 503, description: 'The status answered; null when there was no answer.' })
  status: number | null;

  @ApiProperty({ type: 'integer', minimum: 0, example: 84 })
  duration_ms: number;

  @ApiProperty({ type: String, nullable: true, example: 'answered 503', description: 'What went wrong, in words; null when delivered.' })
  error: string | null;

  @ApiProperty({
    type: String,
    enum: [...ERROR_CLASSES, null],
    nullable: true,
    example: 'status',
    description:
      'Why it failed, one word: `dns` (the name did not resolve; nothing sent), `address_not_public` (the name resolves to an address ' +
      'that is not public; nothing sent), `refused` (connection refused), `tls` (handshake or certificate failed), `timeout` (no whole ' +
      'answer within 10 seconds), `redirect` (a 3xx; not followed), `status` (another answer that is not 2xx), `connection_lost` (the ' +
      'connection broke before the whole answer came), `other`. Null when delivered, and for attempts logged before classes were kept.',
  })
  error_class: string | null;
}

const HEADERS_SCHEMA: { type: 'object'; additionalProperties: SchemaObject } = {
  type: 'object',
  additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
};

/** What an attempt sent besides the body (the delivery's, the same for every attempt). */
export class AttemptRequestDto {
  @ApiProperty({
    ...HEADERS_SCHEMA,
    example: {
      host: 'hooks.example.com',
      'content-length': '151',
      'content-type': 'application/json',
      'user-agent': 'integrations-webhooks/1.0',
      'service-signature': 't=1795766462,v1=5257a869e7…',
    },
    description: 'The headers sent, names in lower case, `service-signature` included (a signature, never the secret).',
  })
  headers: Record<string, string | string[]>;
}

/** What came back. */
export class AttemptResponseDto {
  @ApiProperty({
    ...HEADERS_SCHEMA,
    example: { 'content-type': 'application/json', 'content-length': '17' },
    description: 'The answer’s headers, names in lower case; a header given more than once has every value, in order.',
  })
  headers: Record<string, string | string[]>;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '{"received":true}',
    description: 'The first 8 KiB of the answer’s body when it is text (UTF-8, with a text or JSON content type or none); null otherwise (see `body_base64`).',
  })
  body: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'The first 8 KiB of a body that is not text, base64-encoded; null when `body` holds it or there was none.',
  })
  body_base64: string | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 17,
    description: 'The body’s whole size in bytes when known (read to its end, or from Content-Length); null when unknown.',
  })
  body_size: number | null;

  @ApiProperty({ description: 'True when the body was longer than the 8 KiB kept.' })
  body_truncated: boolean;
}

/** One attempt with its exchange. */
export class AttemptDto extends AttemptSummaryDto {
  @ApiProperty({
    type: AttemptRequestDto,
    nullable: true,
    description:
      'What the attempt sent, or tried to send when the connection failed (`refused`, `tls`); null when it stopped before connecting (`dns`, `address_not_public`) and for attempts logged before exchanges were kept.',
  })
  request: AttemptRequestDto | null;

  @ApiProperty({ type: AttemptResponseDto, nullable: true, description: 'What came back; null when there was no answer.' })
  response: AttemptResponseDto | null;
}

/** A delivery as the log lists it. */
export class DeliveryDto {
  @ApiProperty({
    example: '5f0c3e8a9b7d4c2e8f1a0b3c5d7e9f21',
    pattern: DELIVERY_ID_PATTERN,
    description: 'The body’s `id`: the same on every attempt and resend.',
  })
  id: string;

  @ApiProperty({ example: '31', pattern: ID_SCHEMA_PATTERN })
  webhook_id: string;

  @ApiProperty({ enum: EVENT_NAMES, example: 'conversation.ended' })
  event: string;

  @ApiProperty({ format: 'date-time', description: 'When the event happened (the body’s `occurred_at`).' })
  occurred_at: string;

  @ApiProperty({ format: 'date-time', description: 'When the delivery was made; the list’s order and time range use it.' })
  created_at: string;

  @ApiProperty({ enum: DELIVERY_STATES, example: 'waiting', description: STATE_WORDS })
  state: string;

  @ApiProperty({
    type: String,
    enum: [...Object.values(GIVE_UP_REASONS), null],
    nullable: true,
    example: null,
    description: 'Why it was given up; null otherwise.',
  })
  give_up_reason: string | null;

  @ApiProperty({ description: 'A test delivery (`webhook.test`): tried once, never retried or resent.' })
  test: boolean;

  @ApiProperty({ type: 'integer', minimum: 1, example: 1, description: 'The current series of attempts (a resend starts the next).' })
  series: number;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: 8, example: 2, description: 'Attempts made in the current series.' })
  attempts_in_series: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When the next attempt is due; null when none is.' })
  next_attempt_at: string | null;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it was delivered, failed for good or given up; null while pending.' })
  finished_at: string | null;

  @ApiProperty({ type: AttemptSummaryDto, nullable: true, description: 'The latest attempt; null before the first.' })
  last_attempt: AttemptSummaryDto | null;
}

/** One delivery with the body it sends and every attempt's exchange. */
export class DeliveryDetailDto extends DeliveryDto {
  @ApiProperty({
    example:
      '{"id":"5f0c3e8a9b7d4c2e8f1a0b3c5d7e9f21","event":"conversation.ended","occurred_at":"2026-11-27T08:00:00.000Z","data":{"case_id":"12","conversation_id":"…"}}',
    description: 'The body every attempt sent, byte for byte (the signature covers `<t>.` followed by it).',
  })
  body: string;

  @ApiProperty({ type: AttemptDto, isArray: true, description: 'Every attempt of every series, oldest first, with what it sent and what came back.' })
  attempts: AttemptDto[];
}

/** What a resend did. */
export class ResendResultDto {
  @ApiProperty({
    enum: ['resent', 'tried_now'],
    description:
      '`resent`: a new series of attempts started; `tried_now`: the delivery was waiting for a retry and its next attempt was brought forward to now.',
  })
  action: 'resent' | 'tried_now';

  @ApiProperty({ type: DeliveryDto })
  delivery: DeliveryDto;
}

/** What a recovery did. */
export class RecoveryResultDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 120, description: 'Deliveries sent now: `resent` + `tried_now`.' })
  sent: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 100, description: 'Failed and given-up deliveries that started a new series.' })
  resent: number;

  @ApiProperty({ type: 'integer', minimum: 0, example: 20, description: 'Deliveries waiting for a retry whose next attempt was brought forward to now.' })
  tried_now: number;

  @ApiProperty({ description: 'True when more deliveries of the range remain: call again (with a new `Idempotency-Key`, if you send one).' })
  more: boolean;
}
