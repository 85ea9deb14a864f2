import { Logger } from '@nestjs/common';
import { ErrorCode } from '@kernel/core';
import type { Request, Response } from 'express';
import { dialectOf, ProblemKind } from './error-dialect';

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
  /** What a refusal of the web kit's own is about, for an interface whose error schema says so. */
  kind?: ProblemKind;
  /** The error raised, for a dialect that answers more of it (a SCIM error's keyword and status). */
  cause?: unknown;
}

/** An error's body and content type outside express (Node's own refusals, a cut body): the contract's envelope, or the owning interface's schema. */
export interface RawErrorBody {
  type: string;
  body: string;
}

export const rawErrorBody = (url: string | undefined, status: number, code: ErrorCode, message: string): RawErrorBody => {
  const dialect = dialectOf(url);
  if (dialect) {
    const { type, body } = dialect.answer({ code, message }, status);
    return { type, body };
  }
  return { type: 'application/json; charset=utf-8', body: JSON.stringify({ error: { code, message } }) };
};

const logger = new Logger('ErrorDialect');

/**
 * Writes an error: `{error:{code,message}}` with the status of the code, or the answer of the
 * interface that owns the path (see ErrorDialect).
 */
export function renderError(req: Request, res: Response, err: RenderedError): void {
  // Already answered (a stalled body was cut with 408): the reader's late error has no one to tell.
  if (res.headersSent) return;
  const status = STATUS_BY_CODE[err.code];
  for (const [k, v] of Object.entries(err.headers ?? {})) res.setHeader(k, v);
  const dialect = dialectOf(req.originalUrl ?? req.url);
  if (dialect) {
    const answer = dialect.answer(err, status);
    for (const [k, v] of Object.entries(answer.headers ?? {})) res.setHeader(k, v);
    res.status(answer.status).type(answer.type).send(answer.body);
    try {
      dialect.answered?.(req, answer, err);
    } catch (failure) {
      logger.error(`an error dialect's answered hook failed: ${(failure as Error).message}`);
    }
    return;
  }
  res.status(status).json({ error: { code: err.code, message: err.message } });
}
