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
