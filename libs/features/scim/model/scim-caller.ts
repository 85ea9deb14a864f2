/**
 * Who is calling SCIM: the connection's organisation, the connection (invitations record it) and
 * its scopes; for the provisioning log, the request's User-Agent and id when the edge knows them.
 */
export interface ScimCaller {
  organisationId: string;
  connectionId: string;
  scopes: readonly string[];
  userAgent?: string | null;
  requestId?: string | null;
}

/** A page of a SCIM list: RFC 7644 §3.4.2.4 (startIndex is 1-based). */
export interface ScimPage {
  startIndex: number;
  count: number;
}

export interface ScimList<T> {
  totalResults: number;
  startIndex: number;
  items: T[];
}

/** Page size when `count` is not given, and the most one page holds (ServiceProviderConfig's filter.maxResults). */
export const SCIM_DEFAULT_COUNT = 100;
export const SCIM_MAX_RESULTS = 1000;
