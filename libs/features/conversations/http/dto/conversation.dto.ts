import { ApiProperty } from '@nestjs/swagger';
import { ID_SCHEMA_PATTERN } from '@web/http';

const HEX_ID = '^[0-9a-f]{32}$';
const LANGUAGE = { pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$', description: 'BCP 47 language tag.' } as const;

/** A conversation between two languages, made by the platform's interpreting app in a case. */
export class ConversationDto {
  @ApiProperty({ pattern: HEX_ID, example: '6f1c0e8a4b2d4f7e9a0b1c2d3e4f5a6b', description: '32 lowercase hex characters.' })
  id: string;

  @ApiProperty({ pattern: ID_SCHEMA_PATTERN, example: '42', description: 'The case it took place in.' })
  case_id: string;

  @ApiProperty({ ...LANGUAGE, example: 'en' })
  language_a: string;

  @ApiProperty({ ...LANGUAGE, example: 'es' })
  language_b: string;

  @ApiProperty({ enum: ['active', 'ended'], description: 'active while it is going on; ended once it is over (`conversation.ended` is sent if it has turns).' })
  status: 'active' | 'ended';

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' })
  started_at: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'null while active.' })
  ended_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:00.000Z', description: 'Orders the list (newest first).' })
  created_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2026-11-21T10:05:12.345Z',
    description:
      'Last change of the conversation: a field above (it ended, say), a turn added to its transcript, a fact recorded, its summary written or rewritten.' +
      ' Use it with `updated_since` to keep a copy in sync.',
  })
  updated_at: string;
}

export class TurnTranslationDto {
  @ApiProperty({ ...LANGUAGE, example: 'es', description: 'The other language of the conversation.' })
  language: string;

  @ApiProperty({ example: '¿En qué puedo ayudarle hoy?' })
  text: string;
}

/** One utterance of the transcript, as spoken and as translated. */
export class TurnDto {
  @ApiProperty({ type: 'integer', minimum: 1, example: 1, description: 'Position in the conversation, from 1, without gaps.' })
  seq: number;

  @ApiProperty({ example: 'caseworker', description: 'Who spoke, as the interpreting app labels them.' })
  speaker: string;

  @ApiProperty({ ...LANGUAGE, example: 'en', description: "The language spoken: one of the conversation's two." })
  language: string;

  @ApiProperty({ example: 'How can I help you today?', description: 'What was said, in `language`.' })
  text: string;

  @ApiProperty({ type: TurnTranslationDto })
  translation: TurnTranslationDto;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:30:04.120Z' })
  spoken_at: string;
}

/** A fact recorded in a conversation, e.g. a date of birth or an appointment. */
export class FactDto {
  @ApiProperty({ pattern: ID_SCHEMA_PATTERN, example: '311' })
  id: string;

  @ApiProperty({ example: 'Date of birth' })
  label: string;

  @ApiProperty({ example: '1984-03-02' })
  value: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:31:10.000Z' })
  recorded_at: string;
}

/** The conversation's summary, written for review; it can be rewritten. */
export class SummaryDto {
  @ApiProperty({ pattern: HEX_ID, example: '6f1c0e8a4b2d4f7e9a0b1c2d3e4f5a6b' })
  conversation_id: string;

  @ApiProperty({ example: 'The client asked about housing benefit; an appointment was made for 3 December.' })
  text: string;

  @ApiProperty({ type: 'integer', minimum: 1, example: 1, description: '1 when first written, one more on every rewrite (each sends `summary.ready`).' })
  revision: number;

  @ApiProperty({ format: 'date-time', example: '2026-11-21T09:45:00.000Z', description: 'When this revision was written.' })
  updated_at: string;
}
