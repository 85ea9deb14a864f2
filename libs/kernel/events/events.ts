/**
 * The contract's events: what each carries in `data` (ids only, never words of a conversation,
 * summary or document) and the scope a connection must hold to receive it.
 */
export interface EventPayloads {
  'conversation.ended': { conversation_id: string };
  'summary.ready': { conversation_id: string };
  'document.translated': { document_id: string; case_id: string; language: string };
  'user.joined': { user_id: string };
  'webhook.test': { webhook_id: string; connection_id: string };
}

export type EventName = keyof EventPayloads;

export const EVENT_SCOPES: Record<EventName, string> = {
  'conversation.ended': 'conversations:read',
  'summary.ready': 'summaries:read',
  'document.translated': 'documents:read',
  'user.joined': 'users:read',
  'webhook.test': 'webhooks:manage',
};

export const EVENT_NAMES = Object.keys(EVENT_SCOPES) as EventName[];

/** Events a webhook may subscribe to (nobody subscribes to webhook.test). */
export const SUBSCRIBABLE_EVENTS = EVENT_NAMES.filter((e) => e !== 'webhook.test');
