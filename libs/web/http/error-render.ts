import { ErrorCode } from '@kernel/core';
import type { Request, Response } from 'express';

/** Status of each contract error code (the Errors table). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorised: 401,
  module_off: 403,
  scope_missing: 403,
  ip_not_allowed: 403,
  permission_not_grantable: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  case_closed: 409,
  last_people_manager: 409,
  group_holds_cases: 409,
  in_another_organisation: 409,
  file_too_large: 413,
  text_too_long: 413,
  file_type_not_supported: 415,
  validation_failed: 422,
  idempotency_key_reused: 422,
  unknown_permission: 422,
  rate_limited: 429,
  server_error: 500,
};

export interface RenderedError {
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
  /** SCIM's `scimType`, where RFC 7644 defines one for the case. */
  scimType?: string;
  /** SCIM's status where RFC 7644 names another than the code's (413 for a body over the limit). */
  scimStatus?: number;
}

// Case-insensitive, as express routes paths: /SCIM/v2/Users reaches the SCIM controllers too.
export const isScimUrl = (url: string | undefined): boolean => /^\/scim\//i.test(url ?? '');
export const isScimPath = (req: Request): boolean => isScimUrl(req.originalUrl ?? req.url);

/** RFC 7644 §3.12's error body, `status` as a string. */
export const scimErrorJson = (status: number, detail: string, scimType?: string): string =>
  JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status), ...(scimType ? { scimType } : {}), detail });

/** An error's body and content type outside express (Node's own refusals, a cut body): the contract's envelope, or RFC 7644's error schema under /scim/. */
export interface RawErrorBody {
  type: string;
  body: string;
}

export const rawErrorBody = (url: string | undefined, status: number, code: string, message: string): RawErrorBody =>
  isScimUrl(url)
    ? { type: 'application/scim+json; charset=utf-8', body: scimErrorJson(status, message) }
    : { type: 'application/json; charset=utf-8', body: JSON.stringify({ error: { code, message } }) };

/**
 * Writes an error: `{error:{code,message}}` on the REST interface, RFC 7644's error schema on
 * SCIM paths (status as a string, the contract's code kept in `detail`'s companion field).
 */
export function renderError(req: Request, res: Response, err: RenderedError): void {
  // Already answered (a stalled body was cut with 408): the reader's late error has no one to tell.
  if (res.headersSent) return;
  const status = STATUS_BY_CODE[err.code];
  for (const [k, v] of Object.entries(err.headers ?? {})) res.setHeader(k, v);
  if (isScimPath(req)) {
    const scimStatus = err.scimStatus ?? status;
    res
      .status(scimStatus)
      .type('application/scim+json')
      .send(scimErrorJson(scimStatus, err.message, err.scimType));
    return;
  }
  res.status(status).json({ error: { code: err.code, message: err.message } });
}
