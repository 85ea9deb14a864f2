/** The scopes a provisioning connection holds: exactly what SCIM reads and writes, nothing of cases or webhooks. */
export const SCIM_SCOPES = ['groups:read', 'groups:write', 'users:read', 'users:write'] as const;

/** The identity providers the set-up page has steps for; `other` is any other SCIM 2.0 client. */
export const IDENTITY_PROVIDERS = {
  okta: { label: 'Okta', defaultName: 'Okta provisioning', steps: '#okta' },
  entra: { label: 'Microsoft Entra ID', defaultName: 'Entra ID provisioning', steps: '#entra' },
  other: { label: 'Another SCIM 2.0 client', defaultName: 'SCIM provisioning', steps: '#accepted' },
} as const;
export type IdentityProvider = keyof typeof IDENTITY_PROVIDERS;

export const isIdentityProvider = (value: string): value is IdentityProvider => Object.hasOwn(IDENTITY_PROVIDERS, value);

/** A connection can provision when it holds every SCIM scope (it may hold others too). */
export const canProvision = (scopes: readonly string[]): boolean => SCIM_SCOPES.every((s) => scopes.includes(s));

/** The SCIM base URL of this installation: what Okta calls the connector base URL and Entra the tenant URL. */
export const scimBaseUrl = (publicBaseUrl: string): string => `${publicBaseUrl}/scim/v2`;
