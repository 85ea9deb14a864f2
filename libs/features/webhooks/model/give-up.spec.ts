import { AttemptContext, giveUpReason } from './give-up';

/** A delivery every check lets through: nothing to give up. */
const due = (over: Partial<AttemptContext> = {}): AttemptContext => ({
  id: 'a'.repeat(32),
  event: 'conversation.ended',
  occurred_at: new Date('2026-01-01T00:00:00Z'),
  data: {},
  is_test: false,
  state: 'queued',
  series: 1,
  attempts: 0,
  next_attempt_at: null,
  webhook_id: '1',
  url: 'https://example.org/hook',
  secret: 's',
  previous_secret: null,
  previous_secret_expires_at: null,
  webhook_deleted_at: null,
  switched_off_at: null,
  connection_revoked_at: null,
  scopes: ['conversations:read'],
  module_enabled: true,
  accepted_policy_version: 3,
  policy_version: 3,
  ...over,
});
const at = new Date('2026-01-02T00:00:00Z');

describe('giveUpReason: the checks before every attempt', () => {
  it('gives nothing up when every check passes (a later accepted policy too)', () => {
    expect(giveUpReason(due())).toBeNull();
    expect(giveUpReason(due({ accepted_policy_version: 4 }))).toBeNull();
  });

  it.each<[string, Partial<AttemptContext>, string]>([
    ['the webhook was removed', { webhook_deleted_at: at }, 'webhook_removed'],
    ['the webhook was switched off', { switched_off_at: at }, 'webhook_switched_off'],
    ['the connection was revoked', { connection_revoked_at: at }, 'connection_revoked'],
    ['the integrations module is off', { module_enabled: false }, 'integrations_module_off'],
    ['the policy was withdrawn', { accepted_policy_version: null }, 'integrations_policy_withdrawn'],
    ['a newer policy is not accepted', { accepted_policy_version: 2 }, 'integrations_policy_withdrawn'],
    ["the connection lost the event's scope", { scopes: ['summaries:read'] }, 'connection_lacks_scope'],
  ])('%s: %j → %s', (_, over, reason) => {
    expect(giveUpReason(due(over))).toBe(reason);
  });

  it('still attempts a test call to a switched-off webhook (a test is how one checks it before switching on)', () => {
    expect(giveUpReason(due({ switched_off_at: at, is_test: true, event: 'webhook.test', scopes: ['webhooks:manage'] }))).toBeNull();
    expect(giveUpReason(due({ switched_off_at: at, is_test: true, webhook_deleted_at: at }))).toBe('webhook_removed');
  });

  it('records the first reason in a fixed order when several apply', () => {
    const all = { webhook_deleted_at: at, switched_off_at: at, connection_revoked_at: at, module_enabled: false, accepted_policy_version: null, scopes: [] };
    const order: string[] = [];
    const left: Partial<AttemptContext> = { ...all };
    for (const key of ['webhook_deleted_at', 'switched_off_at', 'connection_revoked_at', 'module_enabled', 'accepted_policy_version', 'scopes'] as const) {
      order.push(giveUpReason(due(left))!);
      delete left[key];
    }
    expect(order).toEqual([
      'webhook_removed',
      'webhook_switched_off',
      'connection_revoked',
      'integrations_module_off',
      'integrations_policy_withdrawn',
      'connection_lacks_scope',
    ]);
    expect(giveUpReason(due(left))).toBeNull();
  });
});
