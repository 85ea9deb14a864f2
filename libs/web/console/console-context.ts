import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { ConsoleViewer } from './console-access.service';
import type { Request, Response } from 'express';

/** What the console guard leaves on the request for the page that answers. */
export interface ConsoleContext {
  /** The signed-in person; null on the sign-in pages. */
  viewer: ConsoleViewer | null;
  /** The session cookie's token (seals and opens one-shot reveals); null before sign-in. */
  sessionToken: string | null;
  /** The token forms carry in `_csrf`. */
  csrf: string;
  /** This answer's CSP nonce (for an inline script, should a page ever need one). */
  nonce: string;
  /** The path asked for (the navigation marks its page). */
  path: string;
}

export type ConsoleRequest = Request & { console?: ConsoleContext };

/** The page's ConsoleContext (set by ConsoleGuard). */
export const Ctx = createParamDecorator((_data: unknown, ctx: ExecutionContext): ConsoleContext => {
  const req = ctx.switchToHttp().getRequest<ConsoleRequest>();
  if (!req.console) throw new Error('ConsoleGuard did not run for this route');
  return req.console;
});

/** The signed-in person (the route needs a session). */
export const Viewer = createParamDecorator((_data: unknown, ctx: ExecutionContext): ConsoleViewer => {
  const viewer = ctx.switchToHttp().getRequest<ConsoleRequest>().console?.viewer;
  if (!viewer) throw new Error('ConsoleGuard did not sign this route in');
  return viewer;
});

export const CONSOLE_ACCESS = 'console:access';
export interface ConsoleAccessRule {
  /** No session needed (the sign-in pages). */
  anonymous?: boolean;
  /** Only `organisation.own` (the data policy page's changes). */
  owner?: boolean;
  /** A change allowed while the module is off or the policy not accepted (accepting it; signing out). */
  whileModuleOff?: boolean;
}
/** How a console route is let in; without it: a session, and for POST the module on. */
export const ConsoleAccess = (rule: ConsoleAccessRule) => SetMetadata(CONSOLE_ACCESS, rule);

/**
 * Answers with a redirect: 303 after a POST (post-redirect-get), 302 otherwise. Pages return it
 * (`return redirectTo(res, …)`); only the guard, which cannot answer itself, throws SignInRequired.
 */
export function redirectTo(res: Response, location: string): void {
  const method = res.req.method;
  res.redirect(method === 'GET' || method === 'HEAD' ? 302 : 303, location);
}

/** Thrown by the guard when a page needs a session it does not have: the filter redirects to sign-in. */
export class SignInRequired extends Error {
  constructor(readonly location: string) {
    super(`sign-in required: ${location}`);
  }
}

/** Thrown to answer with a page that explains a refusal in words. */
export class ConsoleRefusal extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
  ) {
    super(detail);
  }
}
