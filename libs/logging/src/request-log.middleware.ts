import type { NextFunction, Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';

/**
 * One JSON line per request — `{request: {id, method, path}, response: {status}, responseTime}` — at info
 * (error for 5xx). Method and path only: headers (Authorization) and query strings never reach a
 * log. Nothing is built when the level drops the line. The logger is looked up per request: it
 * exists only once the application has initialised.
 */
export function requestLogMiddleware(getLogger: () => PinoLogger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const logger = getLogger();
    if (!logger.isLevelEnabled('info') && !logger.isLevelEnabled('error')) return next();
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          request: { id: (req as Request & { id?: string }).id, method: req.method, path: req.path },
          response: { status: res.statusCode },
          responseTime: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
        },
        'request completed',
      );
    });
    next();
  };
}
