import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';

export type AnyHandler = RequestHandler | ErrorRequestHandler;

const isErrorHandler = (h: AnyHandler): h is ErrorRequestHandler => h.length === 4;

/**
 * Several express middlewares as one, with express's own rules: they run in order; once one
 * passes an error to `next`, plain middlewares are skipped and only error handlers (four
 * parameters) see it; an error thrown synchronously is passed on like `next(err)`; whatever is
 * left over (an error, 'route', 'router') goes to the outer `next`.
 *
 * Why: every `app.use` is a layer that express's router matches and calls for every request;
 * body parsing's four steps (type check, JSON, form, its error answers) are one layer here.
 */
export function composeMiddleware(...handlers: AnyHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction): void => {
    let index = 0;
    const step = (err?: unknown): void => {
      if (err === 'route' || err === 'router') return done(err);
      while (index < handlers.length) {
        const handler = handlers[index++];
        const forError = isErrorHandler(handler);
        if (Boolean(err) !== forError) continue;
        try {
          if (forError) handler(err, req, res, step);
          else (handler as RequestHandler)(req, res, step);
        } catch (thrown) {
          step(thrown ?? new Error('middleware threw a nullish value'));
        }
        return;
      }
      done(err as Error | undefined);
    };
    step();
  };
}
