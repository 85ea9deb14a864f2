import type { Request } from 'express';
import { ErrorAnswer, ErrorDialect, ProblemKind, RenderedError } from '@web/http';
import { ScimError, ScimNotImplemented, ScimType } from '../model/scim-error';
import { SCIM_URN } from '../model/scim-schemas';

/** RFC 7644 §3.12's error body, `status` as a string. */
export const scimErrorJson = (status: number, detail: string, scimType?: string): string =>
  JSON.stringify({ schemas: [SCIM_URN.error], status: String(status), ...(scimType ? { scimType } : {}), detail });

const KEYWORD: Record<ProblemKind, ScimType | undefined> = {
  syntax: 'invalidSyntax',
  value: 'invalidValue',
  too_large: undefined,
  unsupported_media: undefined,
};

/**
 * A refusal's SCIM status: a ScimError's own where RFC 7644 names one the contract's table has not
 * (409 for `uniqueness`, 501 for an endpoint not implemented); 413 for a body over the limit (RFC
 * 7644 §3.12 names the status, no keyword); 415 for a body in a Content-Encoding or charset not
 * taken (RFC 9110 §15.5.16, no keyword); 400 for a body that does not conform to the schema; else
 * the status of the code.
 */
function scimStatus(err: RenderedError, status: number, cause: ScimError | ScimNotImplemented | undefined): number {
  if (cause?.scimStatus) return cause.scimStatus;
  if (err.kind === 'too_large') return 413;
  if (err.kind === 'unsupported_media') return 415;
  if (err.kind === 'syntax') return 400;
  return status;
}

/** Where an application keeps its refusal listener (`app.locals`): one per express app, so apps in one process never share it. */
export const SCIM_REFUSALS_LOCAL = 'scimRefusals';

/** Told of every SCIM error answer (ScimRefusals records those to log). */
export type ScimRefusalListener = (req: Request, answer: ErrorAnswer) => void;

/**
 * SCIM 2.0's errors, wherever the web kit answers one under /scim/ (any letter case, as express
 * routes paths): RFC 7644's error schema as application/scim+json, with the `scimType` keyword
 * where the RFC defines one for the case; its bodies may be sent as application/scim+json; its
 * calls take the SCIM rate-limit policy.
 */
export const SCIM_ERRORS: ErrorDialect = {
  owns: (url) => /^\/scim\//i.test(url),
  jsonMediaTypes: ['application/scim+json'],
  rateLimit: { policy: 'scim', label: 'SCIM' },
  answer(err: RenderedError, status: number): ErrorAnswer {
    const cause = err.cause instanceof ScimError || err.cause instanceof ScimNotImplemented ? err.cause : undefined;
    const answered = scimStatus(err, status, cause);
    const keyword = cause?.scimType ?? (err.kind ? KEYWORD[err.kind] : undefined);
    return { status: answered, type: 'application/scim+json; charset=utf-8', body: scimErrorJson(answered, err.message, keyword) };
  },
  answered(req: Request, answer: ErrorAnswer): void {
    const listener = (req.app?.locals as Record<string, unknown> | undefined)?.[SCIM_REFUSALS_LOCAL] as ScimRefusalListener | undefined;
    listener?.(req, answer);
  },
};
