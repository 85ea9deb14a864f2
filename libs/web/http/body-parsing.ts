import { DomainError, ErrorCode } from '@kernel/core';
import express, { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { bodyProblem } from './body-check';
import { composeMiddleware } from './compose-middleware';
import { isJsonMediaType } from './error-dialect';
import { renderError } from './error-render';

export const JSON_BODY_LIMIT = '1mb';
export const FORM_BODY_LIMIT = '16kb';
const FORM_TYPE = 'application/x-www-form-urlencoded';

const mediaType = (req: Request) => (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
const isJsonBody = (req: IncomingMessage) => isJsonMediaType(mediaType(req as Request));
const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

/**
 * The content codings a body may be sent in: the JSON parser inflates them, and its size limit
 * counts the inflated bytes, so a small body that inflates past the limit is refused as too large
 * without ever being held whole. One coding only; the set is fixed here rather than left to the
 * parser, whose own set grows with the Node version.
 */
export const CONTENT_CODINGS = ['identity', 'gzip', 'deflate', 'br'];

/** A body's Content-Encoding when it is not one of CONTENT_CODINGS (absent or empty is identity). */
function unsupportedCoding(req: Request): string | null {
  const coding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  return coding === '' || CONTENT_CODINGS.includes(coding) ? null : coding;
}

export interface BodyParsingOptions {
  /** Paths (exact, POST) that also take multipart/form-data; their own handler parses it. */
  multipartPaths?: string[];
  /** Paths (POST) that also take application/x-www-form-urlencoded (HTML forms), parsed into `req.body`: exact, or a prefix ending in `/*`. */
  urlencodedPaths?: string[];
  /** Paths (exact, POST) whose JSON bodies have their own size limit, and their own answer when larger. */
  jsonLimits?: Record<string, JsonPathLimit>;
}

export interface JsonPathLimit {
  /** The largest JSON body taken on the path, in bytes (or a size such as '4mb'). */
  limit: number | string;
  /** The answer to a larger body, instead of 400 invalid_request (e.g. 413 text_too_long). */
  tooLarge: { code: ErrorCode; message: string };
}

/** The error a JSON body that is not UTF-8 raises from the parser's `verify` (see notUtf8). */
const NOT_UTF8 = 'body.not.utf8';

/**
 * JSON bodies are read as UTF-8 only (RFC 8259 §8.1), and strictly: a decoder would quietly turn
 * malformed bytes into U+FFFD, changing what the client sent (two different values could then be
 * stored as one). Runs on the raw bytes, after Content-Encoding is undone, before decoding.
 */
const notUtf8 = (_req: IncomingMessage, _res: unknown, buf: Buffer, encoding: string): void => {
  if (encoding !== 'utf-8' || !isUtf8(buf)) throw Object.assign(new Error('JSON body is not UTF-8'), { type: NOT_UTF8, charset: encoding });
};

/**
 * JSON parsing with the contract's answers: a body that is not JSON, or not sent as JSON,
 * answers 400 invalid_request before any handler runs. Form bodies are taken only on the
 * few non-API paths named in `urlencodedPaths` (the invitation accept page).
 *
 * One middleware. A request without a body (most GETs and DELETEs) passes straight through:
 * each parser would only have found that out itself, at the cost of a content-type parse.
 */
/** Exact paths, and prefixes written `/prefix/*` (which also match `/prefix` itself). */
function pathMatcher(paths: string[]): (path: string) => boolean {
  const exact = new Set(paths.filter((p) => !p.endsWith('/*')));
  const prefixes = paths.filter((p) => p.endsWith('/*')).map((p) => p.slice(0, -1));
  return (path) => exact.has(path) || prefixes.some((p) => path.startsWith(p) || path === p.slice(0, -1));
}

export function bodyParsing(options: BodyParsingOptions = {}): RequestHandler {
  const multipart = new Set(options.multipartPaths ?? []);
  const urlencoded = pathMatcher(options.urlencodedPaths ?? []);
  const jsonLimits = new Map(Object.entries(options.jsonLimits ?? {}));
  const ownLimit = (req: Request): JsonPathLimit | undefined => (req.method === 'POST' ? jsonLimits.get(req.path) : undefined);
  const checkType: RequestHandler = (req, res, next) => {
    if (!hasBody(req)) return next();
    const type = mediaType(req);
    const accepted =
      isJsonMediaType(type) ||
      (type === 'multipart/form-data' && req.method === 'POST' && multipart.has(req.path)) ||
      (type === FORM_TYPE && req.method === 'POST' && urlencoded(req.path));
    if (!accepted) {
      return next(new DomainError('invalid_request', `A body sent as "${type || 'no Content-Type'}" is not accepted here; send application/json.`));
    }
    const coding = unsupportedCoding(req);
    if (coding !== null) {
      return renderError(req, res, {
        code: 'invalid_request',
        message: `Content-Encoding "${coding}" is not supported: send the body uncompressed, or compressed with one of ${CONTENT_CODINGS.slice(1).join(', ')}.`,
        kind: 'unsupported_media',
      });
    }
    next();
  };
  const sharedJson = express.json({ limit: JSON_BODY_LIMIT, type: isJsonBody, strict: true, verify: notUtf8 });
  const pathJson = new Map([...jsonLimits].map(([path, l]) => [path, express.json({ limit: l.limit, type: isJsonBody, strict: true, verify: notUtf8 })]));
  const parseJson: RequestHandler = (req, res, next) => ((req.method === 'POST' && pathJson.get(req.path)) || sharedJson)(req, res, next);
  // Only reached on urlencodedPaths: checkType refuses form bodies everywhere else.
  const parseForm = express.urlencoded({ limit: FORM_BODY_LIMIT, type: FORM_TYPE, extended: false, parameterLimit: 60 });
  const onError: ErrorRequestHandler = (err, req, res, next) => {
    if (err instanceof DomainError) return renderError(req, res, err);
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      const own = mediaType(req) === FORM_TYPE ? undefined : ownLimit(req);
      if (own) return renderError(req, res, own.tooLarge);
      const what = mediaType(req) === FORM_TYPE ? `form body is larger than ${FORM_BODY_LIMIT}` : `JSON body is larger than ${JSON_BODY_LIMIT}`;
      return renderError(req, res, { code: 'invalid_request', message: `The ${what}.`, kind: 'too_large' });
    }
    if (type === NOT_UTF8) {
      // Malformed bytes are a body that is not a JSON text; a charset named other than UTF-8 is a
      // media type not taken, answered as the parser's own unsupported charsets are below.
      const charset = (err as { charset?: string }).charset;
      if (charset === 'utf-8') {
        return renderError(req, res, {
          code: 'invalid_request',
          message: 'The body is not well-formed UTF-8; JSON bodies must be sent in UTF-8.',
          kind: 'syntax',
        });
      }
      return renderError(req, res, { code: 'invalid_request', message: `The charset "${charset}" is not supported: send UTF-8.`, kind: 'unsupported_media' });
    }
    if (type === 'parameters.too.many') {
      return renderError(req, res, { code: 'invalid_request', message: 'The form has too many fields.' });
    }
    if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
      // The body is in a form the parser cannot read (checkType has refused unsupported codings
      // first; a JSON body must be UTF-8), which is not a body that is not JSON.
      const { charset, encoding } = err as { charset?: string; encoding?: string };
      const message = charset ? `The charset "${charset}" is not supported: send UTF-8.` : `Content-Encoding "${encoding}" is not supported.`;
      return renderError(req, res, { code: 'invalid_request', message, kind: 'unsupported_media' });
    }
    if (type === 'entity.parse.failed' || type === 'request.aborted') {
      return renderError(req, res, { code: 'invalid_request', message: 'The body is not valid JSON.', kind: 'syntax' });
    }
    // Anything else the parsers blame on the request (a Content-Encoding that does not
    // decompress, a body shorter than its Content-Length…) is the caller's, not a 500.
    const { status, statusCode } = err as { status?: number; statusCode?: number };
    const blamed = status ?? statusCode;
    if (typeof blamed === 'number' && blamed >= 400 && blamed < 500) {
      return renderError(req, res, {
        code: 'invalid_request',
        message: 'The body could not be read (check Content-Encoding and Content-Length).',
        kind: 'syntax',
      });
    }
    next(err);
  };
  // What parsing accepts but nothing should take (see bodyProblem): NUL characters, arrays over
  // 1000 values, nesting deep enough to overflow a recursive validator, and object-property names.
  const checkParsed: RequestHandler = (req, res, next) => {
    const problem = req.body === undefined ? null : bodyProblem(req.body);
    if (problem) return renderError(req, res, problem);
    next();
  };
  const parse = composeMiddleware(checkType, parseJson, parseForm, checkParsed, onError);
  return (req, res, next) => {
    if (hasBody(req)) return parse(req, res, next);
    // Nothing to read, but a request never read is still open to Node when the answer finishes: it
    // then dumps it and waits for its 'end' with a listener of its own (clearIncoming). Reading its
    // empty body now ends it before that.
    req.resume();
    next();
  };
}
