import type { AppConfig } from '@kernel/config';
import type { Request } from 'express';
import type { RenderedError } from './error-render';

/**
 * What a refusal of the web kit's own is about, for interfaces whose error schema says so (SCIM
 * names `invalidSyntax` and `invalidValue`, answers 413 for a body over the limit, and 415 for a
 * body in a coding or charset that is not taken).
 */
export type ProblemKind = 'syntax' | 'value' | 'too_large' | 'unsupported_media';

/** An error's answer: the status to send, the content type, the body, and headers of the interface's own. */
export interface ErrorAnswer {
  status: number;
  type: string;
  body: string;
  /** Sent with the answer (an HTML interface's Content-Security-Policy, say); not on Node's own refusals, which carry no headers of their own. */
  headers?: Record<string, string>;
}

/**
 * An interface served under a path of its own whose errors have their own schema (SCIM 2.0 under
 * /scim/, RFC 7644's error body; the Integrations section under /console, an HTML page). The web kit answers every error the same way wherever it is
 * raised (the exception filter, the front door's middleware, Node's own refusals): through the
 * dialect that owns the request's path, or the contract's `{error:{code,message}}` envelope.
 */
export interface ErrorDialect {
  /** Whether a request url (path and query, any letter case) belongs to this interface. */
  owns(url: string): boolean;
  /** Media types of JSON bodies this interface takes besides application/json. */
  readonly jsonMediaTypes: readonly string[];
  /** Its own rate-limit policy for keyed calls (a key of the configuration's rate limits besides `rest`), and how the 429's message names the interface; none: REST's. */
  readonly rateLimit?: { policy: Exclude<keyof AppConfig['rateLimits'], 'rest'>; label: string };
  /** The answer to `err`, whose status in the contract's error table is `status`. */
  answer(err: RenderedError, status: number): ErrorAnswer;
  /**
   * Told of each answer it gave to a request express saw (not Node's own refusals), once sent:
   * SCIM logs its refusals. Must not throw, nor keep the answer waiting.
   */
  answered?(req: Request, answer: ErrorAnswer, err: RenderedError): void;
}

const dialects: ErrorDialect[] = [];

/**
 * Makes `dialect` answer the errors under its paths. Called once by the module that serves the
 * interface, while the application is built (before it listens): the same in every process that
 * composes that module, so no replica differs from another.
 */
export function useErrorDialect(dialect: ErrorDialect): void {
  if (!dialects.includes(dialect)) dialects.push(dialect);
}

/** The dialect owning `url`, if any. */
export const dialectOf = (url: string | undefined): ErrorDialect | undefined => (url === undefined ? undefined : dialects.find((d) => d.owns(url)));

/** Whether a body of media type `type` (lowercase, without parameters) is parsed as JSON. */
export const isJsonMediaType = (type: string): boolean => type === 'application/json' || dialects.some((d) => d.jsonMediaTypes.includes(type));
