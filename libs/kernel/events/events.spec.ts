import { EVENT_NAMES, EVENT_SCOPES, SUBSCRIBABLE_EVENTS } from './events';

// The one list of events: the relay, the webhook checks and the OpenAPI enum all read it.
describe('subscribable events', () => {
  it('are every event but webhook.test, each with the scope it needs', () => {
    expect(SUBSCRIBABLE_EVENTS).toEqual(['conversation.ended', 'summary.ready', 'document.translated', 'user.joined']);
    expect(EVENT_NAMES).toContain('webhook.test');
    expect(SUBSCRIBABLE_EVENTS.map((e) => EVENT_SCOPES[e])).toEqual(['conversations:read', 'summaries:read', 'documents:read', 'users:read']);
  });
});
