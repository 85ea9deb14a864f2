import type { Request, Response } from 'express';
import { renderError } from './error-render';

/** The largest request line and headers taken (Node's default): larger answers 400 invalid_request. */
export const HEADER_LIMIT = 16 * 1024;
/**
 * What Node itself reads before refusing (its `maxHeaderSize`): above HEADER_LIMIT, so that the
 * front door, which knows the path, answers the larger ones (in the schema of the interface that owns it).
 * Node's own refusal, beyond this, cannot always tell the path.
 */
export const NODE_MAX_HEADER_SIZE = 64 * 1024;
export const HEADER_LIMIT_MESSAGE = 'The request line and headers are too large (the limit is 16 KB); send long values in a body.';

/** Counted as Node counts towards its limit: the target and every header name and value. */
function headerSize(req: Request): number {
  let size = req.url.length;
  for (const part of req.rawHeaders) size += part.length;
  return size;
}

/** Answers 400 (and closes the connection) when the head is over HEADER_LIMIT; true when it did. */
export function refuseLargeHead(req: Request, res: Response): boolean {
  if (headerSize(req) <= HEADER_LIMIT) return false;
  renderError(req, res, { code: 'invalid_request', message: HEADER_LIMIT_MESSAGE, headers: { Connection: 'close' } });
  return true;
}
