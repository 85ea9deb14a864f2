import { DomainError } from '@kernel/core';
import { renderError } from '@web/http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ConnectionRateLimit } from './connection-rate-limit';
import { AuthenticatedRequest, KeyGate } from './key-gate';
import { PublicRoutes } from './public-routes';

/**
 * The front door's key check, before routing and body parsing: a public route (path and method)
 * only meets the refused-key throttle; every other call is authenticated (429 → 401 → 403) and refused there,
 * in the contract's envelope, then takes a call from its connection's rate limit (429 when it is
 * used up; the RateLimit headers either way). An admitted call goes on to `then` (body parsing) with the
 * principal on the request; the guard adds the route's scope check.
 */
export function keyCheck(gate: KeyGate, publicRoutes: PublicRoutes, rateLimit: ConnectionRateLimit, then: RequestHandler): RequestHandler {
  const refuse = (req: Request, res: Response, next: NextFunction, err: unknown): void => {
    if (err instanceof DomainError) renderError(req, res, { code: err.code, message: err.message, headers: err.headers });
    else next(err);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    let admitted: true | Promise<true>;
    try {
      const open = publicRoutes.match(req.path, req.method);
      if (!open) {
        const authenticated = gate.authenticate(req as AuthenticatedRequest);
        const limit = () => rateLimit.admit(req as AuthenticatedRequest, res);
        admitted = authenticated === true ? limit() : authenticated.then(limit);
      } else admitted = open.throttled ? gate.checkThrottle(req) : true;
    } catch (err) {
      return refuse(req, res, next, err);
    }
    if (admitted === true) {
      then(req, res, next);
      return;
    }
    admitted
      .then(
        () => then(req, res, next),
        (err: unknown) => refuse(req, res, next, err),
      )
      // Whatever throws past this point is the server's own error (500), not a refusal.
      .catch(next);
  };
}
