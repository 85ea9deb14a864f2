import { DomainError } from '@app/domain';
import express, { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { renderError } from './error-render';

export const JSON_BODY_LIMIT = '1mb';
export const FORM_BODY_LIMIT = '16kb';
const JSON_TYPES = ['application/json', 'application/scim+json'];
const FORM_TYPE = 'application/x-www-form-urlencoded';

const mediaType = (req: Request) => (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

export interface BodyParsingOptions {
  /** Paths (exact, POST) that also take multipart/form-data; their own handler parses it. */
  multipartPaths?: string[];
  /** Paths (exact, POST) that also take application/x-www-form-urlencoded (HTML forms), parsed into `req.body`. */
  urlencodedPaths?: string[];
}

/**
 * JSON parsing with the contract's answers: a body that is not JSON, or not sent as JSON,
 * answers 400 invalid_request before any handler runs. Form bodies are taken only on the
 * few non-API paths named in `urlencodedPaths` (the invitation accept page).
 */
export function bodyParsing(options: BodyParsingOptions = {}): Array<RequestHandler | ErrorRequestHandler> {
  const multipart = new Set(options.multipartPaths ?? []);
  const urlencoded = new Set(options.urlencodedPaths ?? []);
  const checkType: RequestHandler = (req, _res, next) => {
    if (!hasBody(req)) return next();
    const type = mediaType(req);
    if (JSON_TYPES.includes(type)) return next();
    if (type === 'multipart/form-data' && req.method === 'POST' && multipart.has(req.path)) return next();
    if (type === FORM_TYPE && req.method === 'POST' && urlencoded.has(req.path)) return next();
    next(new DomainError('invalid_request', `A body sent as "${type || 'no Content-Type'}" is not accepted here; send application/json.`));
  };
  const parseJson = express.json({ limit: JSON_BODY_LIMIT, type: JSON_TYPES, strict: true });
  // Only reached on urlencodedPaths: checkType refuses form bodies everywhere else.
  const parseForm = express.urlencoded({ limit: FORM_BODY_LIMIT, type: FORM_TYPE, extended: false, parameterLimit: 20 });
  const onError: ErrorRequestHandler = (err, req, res, next) => {
    if (err instanceof DomainError) return renderError(req, res, err);
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      const what = mediaType(req) === FORM_TYPE ? `form body is larger than ${FORM_BODY_LIMIT}` : `JSON body is larger than ${JSON_BODY_LIMIT}`;
      return renderError(req, res, { code: 'invalid_request', message: `The ${what}.`, scimType: 'tooLarge' });
    }
    if (type === 'parameters.too.many') {
      return renderError(req, res, { code: 'invalid_request', message: 'The form has too many fields.' });
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.aborted') {
      return renderError(req, res, { code: 'invalid_request', message: 'The body is not valid JSON.', scimType: 'invalidSyntax' });
    }
    next(err);
  };
  return [checkType, parseJson, parseForm, onError];
}
