import type { ParsedCidr } from './client-ip';

/** The connection a key belongs to, as the guard found it for this call. */
export interface Principal {
  keyId: string;
  keyLastFour: string;
  connectionId: string;
  connectionName: string;
  connectionCreatedAt: Date;
  organisationId: string;
  organisationName: string;
  scopes: string[];
}

/** A key lookup, cached per replica while invalidation messages are being received. */
export interface CachedKey {
  principal: Principal;
  revoked: boolean;
  moduleOn: boolean;
  allowlist: ParsedCidr[];
}
