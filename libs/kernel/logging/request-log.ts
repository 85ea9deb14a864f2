import type { Request, Response } from 'express';
import pino, { Logger as PinoLogger } from 'pino';

const STARTED = Symbol('requestStarted');
type Timed = Response & { [STARTED]?: bigint };

/** Told of every finished request and how long it took, by the same `finish` listener as the request line. */
export type RequestObserver = (res: Response, elapsedNs: bigint) => void;

const { streamSym, chindingsSym } = pino.symbols;
type Internals = Record<symbol, unknown>;

/**
 * One JSON line per request — `{request: {id, method, path}, response: {status}, responseTime}` — at info
 * (error for 5xx). Method and path only: headers (Authorization) and query strings never reach a
 * log. Request lines are an info-level stream: above info (LOG_LEVEL=warn…) no line is written; a 500
 * is still logged, with its error id, request id and stack, by the exception filter.
 *
 * One shared `finish` listener (it reads the response from `this`) instead of a closure per request,
 * and one clock reading for both the line and `observe` (the request metrics), so that a request
 * costs one listener whatever is watching it; nothing is added to a request when neither is on.
 * The logger is looked up per request: it exists only once the application has initialised.
 */
export function requestLog(getLogger: () => PinoLogger, observe?: RequestObserver): (req: Request, res: Response) => void {
  function onFinish(this: Timed): void {
    const elapsed = process.hrtime.bigint() - (this[STARTED] ?? 0n);
    observe?.(this, elapsed);
    const logger = getLogger();
    if (logger.isLevelEnabled('info')) writeRequestLine(logger, this.req as Request & { id?: unknown }, this.statusCode, Number(elapsed / 1000n) / 1000);
  }
  return (_req: Request, res: Response): void => {
    if (observe === undefined && !getLogger().isLevelEnabled('info')) return;
    (res as Timed)[STARTED] = process.hrtime.bigint();
    res.on('finish', onFinish);
  };
}

/**
 * The request line, written straight to the logger's destination: the same bytes pino writes for
 * `logger.info({request, response, responseTime}, 'request completed')` (level, time, the logger's
 * bindings, then the fields; request-log.spec.ts holds the two side by side), built from values
 * already at hand instead of through pino's generic path, which walks the object, serialises it key
 * by key and runs the redaction paths over a line that can hold no secret (an id, a method, a path
 * without its query, numbers), work paid on every call at info (`bench/me.bench.js` measures it).
 */
export function writeRequestLine(logger: PinoLogger, req: Request & { id?: unknown }, status: number, responseTimeMs: number): void {
  const internals = logger as unknown as Internals;
  const level = status >= 500 ? 50 : 30;
  // The method is an HTTP token (the parser refuses anything else); the id and the path are escaped.
  (internals[streamSym] as { write(line: string): void }).write(
    `{"level":${level},"time":${Date.now()}${internals[chindingsSym] as string},"request":{"id":${JSON.stringify(req.id)},"method":"${req.method}","path":${JSON.stringify(req.path)}},"response":{"status":${status}},"responseTime":${responseTimeMs},"msg":"request completed"}\n`,
  );
}
