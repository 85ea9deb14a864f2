import type { Express } from 'express';

/**
 * Express turns a GET's answer into an empty 304 whenever its freshness check holds, and that check
 * holds `If-None-Match: *` for any answer, with or without an ETag. No answer of the api carries a
 * validator but the OpenAPI description, which compares its own strong ETag by hand; SCIM
 * announces ETags unsupported. So the check is off for the whole app: conditional request headers
 * are ignored (RFC 9110 §13.2.1 lets a server ignore them) and an answer is always sent whole.
 */
export function ignoreConditionalHeaders(app: Express): void {
  Object.defineProperty(app.request, 'fresh', { configurable: true, enumerable: true, get: () => false });
}
