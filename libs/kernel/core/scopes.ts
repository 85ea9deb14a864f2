/** The contract's scopes, held by a connection and gating each call. */
export const SCOPES = [
  'cases:read',
  'cases:write',
  'conversations:read',
  'summaries:read',
  'documents:read',
  'documents:write',
  'groups:read',
  'groups:write',
  'users:read',
  'users:write',
  'webhooks:manage',
] as const;

export type Scope = (typeof SCOPES)[number];

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** One line per scope on what it allows (the console's checkboxes). */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'cases:read': 'List and read cases.',
  'cases:write': 'Open cases and start conversations in them.',
  'conversations:read': 'Read conversations, their facts and transcripts.',
  'summaries:read': 'Read conversation summaries, where conversation review is on.',
  'documents:read': 'Read documents sent for translation and their translations.',
  'documents:write': 'Send documents and text for translation.',
  'groups:read': 'List groups, their permissions and the permission catalogue.',
  'groups:write': 'Create, change and delete groups and their permissions (also over SCIM).',
  'users:read': 'List and read the organisation’s people, and its provisioning log (SCIM changes and refusals).',
  'users:write': 'Add, change, disable and remove people (also over SCIM).',
  'webhooks:manage': 'Add, list and remove webhooks and send test deliveries.',
};
