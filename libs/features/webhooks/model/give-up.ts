import { policyAccepted } from '@kernel/core';
import { EVENT_SCOPES, EventName } from '@kernel/events';

/** Why a delivery was given up before an attempt. */
export const GIVE_UP_REASONS = {
  connectionRevoked: 'connection_revoked',
  webhookRemoved: 'webhook_removed',
  webhookSwitchedOff: 'webhook_switched_off',
  moduleOff: 'integrations_module_off',
  policyWithdrawn: 'integrations_policy_withdrawn',
  scopeMissing: 'connection_lacks_scope',
} as const;

export type GiveUpReason = (typeof GIVE_UP_REASONS)[keyof typeof GIVE_UP_REASONS];

/** A delivery and, read with it, everything the checks before an attempt need. */
export interface AttemptContext {
  id: string;
  event: string;
  occurred_at: Date;
  data: Record<string, string>;
  is_test: boolean;
  state: string;
  series: number;
  attempts: number;
  next_attempt_at: Date | null;
  webhook_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  webhook_deleted_at: Date | null;
  switched_off_at: Date | null;
  connection_revoked_at: Date | null;
  scopes: string[];
  module_enabled: boolean;
  accepted_policy_version: number | null;
  policy_version: number;
}

/** The checks made before every attempt, in the order their reasons are recorded. */
export function giveUpReason(c: AttemptContext): GiveUpReason | null {
  if (c.webhook_deleted_at) return GIVE_UP_REASONS.webhookRemoved;
  // A switched-off webhook can still be tested.
  if (c.switched_off_at && !c.is_test) return GIVE_UP_REASONS.webhookSwitchedOff;
  if (c.connection_revoked_at) return GIVE_UP_REASONS.connectionRevoked;
  if (!c.module_enabled) return GIVE_UP_REASONS.moduleOff;
  if (!policyAccepted(c.accepted_policy_version, c.policy_version)) return GIVE_UP_REASONS.policyWithdrawn;
  if (!c.scopes.includes(EVENT_SCOPES[c.event as EventName])) return GIVE_UP_REASONS.scopeMissing;
  return null;
}

/** The body a receiver gets: ids and the event only. Its bytes are what the signature covers. */
export function deliveryBody(d: { id: string; event: string; occurred_at: Date; data: Record<string, string> }): string {
  return JSON.stringify({ id: d.id, event: d.event, occurred_at: new Date(d.occurred_at).toISOString(), data: d.data });
}
