import { ApiProperty } from '@nestjs/swagger';
import { WEBHOOK_URL_MAX_LENGTH, WEBHOOK_URL_PATTERN } from '../../model/webhook-url';
import { EVENT_SCOPES, SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { ArrayMaxSize, IsArray, IsString, MaxLength } from 'class-validator';

export class CreateWebhookDto {
  @ApiProperty({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    pattern: WEBHOOK_URL_PATTERN,
    example: 'https://hooks.example.com/interpreting',
    description:
      'Stored and answered as sent. https on port 443 only, no user name or password, no fragment, and no space, backslash, control character ' +
      'or character a URL carries only percent-encoded (`"`, `<`, `>`, `^`, `` ` ``, `{`, `|`, `}`: write `%22`, `%3C`, …; refused, not rewritten). ' +
      'The address must be public: an IP literal or a name resolving to a loopback, ' +
      'private, link-local, CGNAT, unique-local, multicast, reserved or documentation address (or an IPv4-mapped, NAT64 or 6to4 ' +
      'form of one), `0.0.0.0` and `localhost` are refused. A name that does not resolve yet is accepted; its deliveries fail until it does. ' +
      'A refusal (like a test-call or delivery error) says the name resolves to an address that is not public, never which address.',
  })
  @IsString()
  @MaxLength(WEBHOOK_URL_MAX_LENGTH)
  url: string;

  @ApiProperty({
    type: String,
    isArray: true,
    enum: SUBSCRIBABLE_EVENTS,
    minItems: 1,
    maxItems: 20,
    example: ['conversation.ended', 'summary.ready'],
    description:
      `At least one event. Each needs a scope the connection holds (${SUBSCRIBABLE_EVENTS.map((e) => `\`${e}\`: ${EVENT_SCOPES[e]}`).join(', ')}); ` +
      'otherwise 422 `validation_failed` naming the scope. `webhook.test` cannot be subscribed to.',
  })
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  events: string[];
}
