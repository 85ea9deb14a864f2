import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { composeMiddleware } from './compose-middleware';

const req = {} as Request;
const res = {} as Response;

function run(handler: RequestHandler): Promise<unknown> {
  return new Promise((resolve) => handler(req, res, ((err?: unknown) => resolve(err ?? 'done')) as NextFunction));
}

describe('composeMiddleware', () => {
  it('runs plain middlewares in order and then calls the outer next once', async () => {
    const seen: string[] = [];
    const mw =
      (name: string): RequestHandler =>
      (_q, _s, next) => {
        seen.push(name);
        next();
      };
    const skippedErrorHandler: ErrorRequestHandler = (_e, _q, _s, next) => {
      seen.push('error handler');
      next();
    };
    expect(await run(composeMiddleware(mw('a'), skippedErrorHandler, mw('b')))).toBe('done');
    expect(seen).toEqual(['a', 'b']);
  });

  it('skips plain middlewares after an error and hands it to the next error handler', async () => {
    const seen: string[] = [];
    const boom = new Error('boom');
    const composed = composeMiddleware(
      ((_q, _s, next) => next(boom)) as RequestHandler,
      ((_q, _s, next) => {
        seen.push('skipped');
        next();
      }) as RequestHandler,
      ((err, _q, _s, next) => {
        seen.push(`handled ${(err as Error).message}`);
        next();
      }) as ErrorRequestHandler,
      ((_q, _s, next) => {
        seen.push('after recovery');
        next();
      }) as RequestHandler,
    );
    expect(await run(composed)).toBe('done');
    expect(seen).toEqual(['handled boom', 'after recovery']);
  });

  it('treats a synchronous throw like next(err) and passes an unhandled error to the outer next', async () => {
    const boom = new Error('thrown');
    const composed = composeMiddleware(() => {
      throw boom;
    });
    expect(await run(composed)).toBe(boom);
  });

  it("passes 'route' and 'router' straight out", async () => {
    const after = jest.fn();
    const toRoute: RequestHandler = (_q, _s, next) => next('route');
    expect(await run(composeMiddleware(toRoute, after))).toBe('route');
    expect(after).not.toHaveBeenCalled();
  });

  it('does nothing more when a middleware answers without calling next', async () => {
    const after = jest.fn();
    const outer = jest.fn();
    composeMiddleware(() => undefined, after)(req, res, outer);
    expect(after).not.toHaveBeenCalled();
    expect(outer).not.toHaveBeenCalled();
  });
});
