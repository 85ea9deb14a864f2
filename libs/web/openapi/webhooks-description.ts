import { ID_PATTERN } from '@kernel/core';
import { EVENT_NAMES, EVENT_SCOPES, EventName, EventPayloads } from '@kernel/events';

type Json = Record<string, unknown>;

/** When each event is sent, and what each field of its `data` names (the contract's Events table). */
const EVENTS: { [E in EventName]: { when: string; data: Record<keyof EventPayloads[E], string>; example: EventPayloads[E] } } = {
  'conversation.ended': {
    when: 'A conversation in the organisation ended, once it has at least one turn.',
    data: { conversation_id: 'Id of the conversation (read it with `GET /v1/conversations/{id}`).' },
    example: { conversation_id: '6f1c0e8a4b2d4f7e9a0b1c2d3e4f5a6b' },
  },
  'summary.ready': {
    when: "A conversation's summary was written or rewritten.",
    data: { conversation_id: 'Id of the conversation whose summary is ready (`GET /v1/conversations/{id}/summary`).' },
    example: { conversation_id: '6f1c0e8a4b2d4f7e9a0b1c2d3e4f5a6b' },
  },
  'document.translated': {
    when: 'A document sent through the API was translated into one of its languages.',
    data: {
      document_id: 'Id of the document (`GET /v1/documents/{id}`).',
      case_id: 'Id of the case the document belongs to.',
      language: 'BCP 47 tag of the language it was translated into.',
    },
    example: { document_id: '7731', case_id: '5120', language: 'es' },
  },
  'user.joined': {
    when: 'A person invited through the API accepted the invitation.',
    data: { user_id: 'Id of the person (`GET /v1/users/{id}`).' },
    example: { user_id: '9902' },
  },
  'webhook.test': {
    when: "Only when `POST /v1/webhooks/{id}/test` is called or the test is sent from the connection's Webhooks page; nobody subscribes to it.",
    data: { webhook_id: 'Id of the webhook tested.', connection_id: 'Id of the connection the webhook belongs to.' },
    example: { webhook_id: '310', connection_id: '88' },
  },
};

/** The delivery's id, and a conversation's: 32 lowercase hex characters (other ids are strings of digits). */
export const DELIVERY_ID_PATTERN = '^[0-9a-f]{32}$';
const HEX_ID_PATTERN = DELIVERY_ID_PATTERN;

/** The component name of an event's body schema: `conversation.ended` → `ConversationEndedEvent`. */
export const eventSchemaName = (event: string): string =>
  `${event
    .split(/[._]/)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')}Event`;

/** The body of one event's delivery, as JSON Schema. */
function eventSchema(event: EventName): Json {
  const fields = EVENTS[event].data as Record<string, string>;
  const data: Json = {
    type: 'object',
    additionalProperties: false,
    required: Object.keys(fields),
    properties: Object.fromEntries(
      Object.entries(fields).map(([name, description]) => [
        name,
        {
          type: 'string',
          ...(name === 'language' ? { minLength: 1 } : { pattern: name === 'conversation_id' ? HEX_ID_PATTERN : ID_PATTERN.source }),
          description,
        },
      ]),
    ),
  };
  return {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'event', 'occurred_at', 'data'],
    description: `The body of a \`${event}\` delivery. It carries ids and the event only, never the words of a conversation, summary or document.`,
    properties: {
      id: {
        type: 'string',
        pattern: DELIVERY_ID_PATTERN,
        description: 'Unique id of the delivery: use it to discard repeats (a delivery can arrive more than once).',
      },
      event: { type: 'string', const: event, description: 'The event name.' },
      occurred_at: {
        type: 'string',
        format: 'date-time',
        description: 'When it happened (ISO 8601, UTC): use it for ordering (deliveries can arrive out of order).',
      },
      data,
    },
  };
}

/** The example body of an event's delivery. */
export function eventExample(event: EventName): Json {
  return { id: '6f1c2b7e9a0d4c3b8e5f1a2d3c4b5a69', event, occurred_at: '2026-11-27T09:30:12.345Z', data: EVENTS[event].example };
}

const SIGNATURE_DESCRIPTION = `\`t=<unix seconds>,v1=<signature>\`: \`<signature>\` is the lowercase hex HMAC-SHA256 of the text \`<t>.<raw body>\`, keyed with the webhook's secret (\`whsec_…\`).
Verify it on the raw body as received, before any parsing; compare in constant time; refuse a delivery whose \`t\` is more than five minutes from your clock.
While a secret is being rotated the header carries one \`v1=\` value per live secret (\`t=…,v1=<new>,v1=<old>\`): accept the delivery when any of them matches.`;

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event the service sends, its body (a component
 * schema), an example, and the `Service-Signature` header; and the schemas it refers to.
 */
export function webhooksSection(): { webhooks: Json; schemas: Json; tag: { name: string; description: string } } {
  const webhooks: Json = {};
  const schemas: Json = {};
  for (const event of EVENT_NAMES) {
    schemas[eventSchemaName(event)] = eventSchema(event);
    webhooks[event] = {
      post: {
        operationId: `${eventSchemaName(event)[0].toLowerCase()}${eventSchemaName(event).slice(1)}`,
        summary: event,
        description: `${EVENTS[event].when} The connection must hold \`${EVENT_SCOPES[event]}\`. The service POSTs this body, as \`application/json\`, to each address subscribed to the event; a 2xx answer within 10 seconds is a success, anything else (a redirect too: it is not followed) a failure, retried later.`,
        tags: ['Events'],
        security: [],
        parameters: [
          {
            name: 'Service-Signature',
            in: 'header',
            required: true,
            description: SIGNATURE_DESCRIPTION,
            schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
            example: 't=1795771812,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
          },
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${eventSchemaName(event)}` }, example: eventExample(event) } },
        },
        responses: {
          '200': { description: 'Any 2xx answer within 10 seconds: received. Its body is not read.' },
        },
      },
    };
  }
  const tag = {
    name: 'Events',
    description:
      "What the service POSTs to a webhook's address (see Webhooks to add one). Every delivery is signed (`Service-Signature`); it can arrive more than once and out of order: `id` discards a repeat, `occurred_at` gives the order.",
  };
  return { webhooks, schemas, tag };
}
