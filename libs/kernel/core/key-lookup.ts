/** Everything the guard needs to decide on a call, read in one indexed lookup by hash. */
export interface KeyPrincipalRow {
  keyId: string;
  keyLastFour: string;
  keyRevoked: boolean;
  connectionId: string;
  connectionName: string;
  connectionCreatedAt: Date;
  connectionRevoked: boolean;
  scopes: string[];
  organisationId: string;
  organisationName: string;
  moduleEnabled: boolean;
  policyAccepted: boolean;
  ipAllowlist: string[];
}

/**
 * What key authentication needs from the key store. An abstract class so it is also the
 * injection token: the domain implements it (ApiKeysService) and the api binds it, so the auth
 * library never loads the domain.
 */
export abstract class KeyLookup {
  abstract findForAuth(hash: string): Promise<KeyPrincipalRow | null>;
  abstract touchLastUsed(keyId: string): Promise<void>;
}

/** The pub/sub channel on which key, connection and organisation changes are announced. */
export const AUTH_INVALIDATION_CHANNEL = 'auth-invalidate';

/** What changed: every cached principal that depends on it must be dropped. */
export type AuthInvalidation = { kind: 'key'; id: string } | { kind: 'connection'; id: string } | { kind: 'organisation'; id: string } | { kind: 'all' };
