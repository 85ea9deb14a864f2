import type { Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';

const STARTED = Symbol('requestStarted');
type Timed = Response & { [STARTED]?: bigint };

/**
 * One JSON line per request — `{request: {id, method, path}, response: {status}, responseTime}` — at info
 * (error for 5xx). Method and path only: headers (Authorization) and query strings never reach a
 * log. Request lines are an info-level stream: above info (LOG_LEVEL=warn…) nothing is done per
 * request; a 500 is still logged, with its error id, request id and stack, by the exception filter.
 * The logger is looked up per request: it exists only once the application has initialised. One
 * shared `finish` listener (it reads the response from `this`) instead of a closure per request.
 */
export function requestLog(getLogger: () => PinoLogger): (req: Request, res: Response) => void {
  function onFinish(this: Timed): void {
    const level = this.statusCode >= 500 ? 'error' : 'info';
    const logger = getLogger();
    const req = this.req as Request & { id?: string };
    logger[level](
      {
        request: { id: req.id, method: req.method, path: req.path },
        response: { status: this.statusCode },
        responseTime: Number((process.hrtime.bigint() - (this[STARTED] ?? 0n)) / 1000n) / 1000,
      },
      'request completed',
    );
  }
  return (_req: Request, res: Response): void => {
    if (!getLogger().isLevelEnabled('info')) return;
    (res as Timed)[STARTED] = process.hrtime.bigint();
    res.on('finish', onFinish);
  };
}
