import { DomainError } from '@app/domain';
import express, { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { renderError } from './error-render';

export const JSON_BODY_LIMIT = '1mb';
const JSON_TYPES = ['application/json', 'application/scim+json'];

const mediaType = (req: Request) => (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
const hasBody = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';

export interface BodyParsingOptions {
  /** Paths (exact, POST) that also take multipart/form-data; their own handler parses it. */
  multipartPaths?: string[];
}

/**
 * JSON parsing with the contract's answers: a body that is not JSON, or not sent as JSON,
 * answers 400 invalid_request before any handler runs.
 */
export function bodyParsing(options: BodyParsingOptions = {}): Array<RequestHandler | ErrorRequestHandler> {
  const multipart = new Set(options.multipartPaths ?? []);
  const checkType: RequestHandler = (req, _res, next) => {
    if (!hasBody(req)) return next();
    const type = mediaType(req);
    if (JSON_TYPES.includes(type)) return next();
    if (type === 'multipart/form-data' && req.method === 'POST' && multipart.has(req.path)) return next();
    next(new DomainError('invalid_request', `A body sent as "${type || 'no Content-Type'}" is not accepted here; send application/json.`));
  };
  const parseJson = express.json({ limit: JSON_BODY_LIMIT, type: JSON_TYPES, strict: true });
  const onError: ErrorRequestHandler = (err, req, res, next) => {
    if (err instanceof DomainError) return renderError(req, res, err);
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      return renderError(req, res, { code: 'invalid_request', message: `The JSON body is larger than ${JSON_BODY_LIMIT}.`, scimType: 'tooLarge' });
    }
    if (type === 'entity.parse.failed' || type === 'encoding.unsupported' || type === 'charset.unsupported' || type === 'request.aborted') {
      return renderError(req, res, { code: 'invalid_request', message: 'The body is not valid JSON.', scimType: 'invalidSyntax' });
    }
    next(err);
  };
  return [checkType, parseJson, onError];
}
