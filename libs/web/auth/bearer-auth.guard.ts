import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError, Scope } from '@kernel/core';
import { principalOf, PUBLIC_KEY, SCOPES_KEY } from './auth.decorators';
import { AuthenticatedRequest, KeyGate } from './key-gate';
import type { Principal } from './principal';

interface RouteNeeds {
  cls: object;
  public: boolean;
  scopes: Scope[];
}

/**
 * The route's part of authentication: 403 scope_missing. The key itself was checked at the front
 * door (KeyCheck, before routing); should a request reach a route that needs a key without having
 * been through it, the guard checks the key here, in the same order, so no route is ever open.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  /** What each handler's decorators ask for, read once: metadata does not change after start-up. */
  private readonly routeNeeds = new WeakMap<object, RouteNeeds>();

  constructor(
    private readonly reflector: Reflector,
    private readonly gate: KeyGate,
  ) {}

  /** Synchronous when the key was checked already or is in the cache: no promise of its own. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const needs = this.needsOf(context);
    if (needs.public) return true;
    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    if (req.principal) return this.checkScopes(req.principal, needs);
    const admitted = this.gate.authenticate(req);
    const scopes = (): true => this.checkScopes(principalOf(req), needs);
    return admitted === true ? scopes() : admitted.then(scopes);
  }

  private checkScopes(principal: Principal, needs: RouteNeeds): true {
    const missing = needs.scopes.filter((s) => !principal.scopes.includes(s));
    if (missing.length > 0) {
      throw this.gate.counted(
        'scope_missing',
        new DomainError('scope_missing', `This call needs the scope ${missing.join(', ')}, which the connection does not hold.`),
      );
    }
    return true;
  }

  private needsOf(context: ExecutionContext): RouteNeeds {
    const handler = context.getHandler();
    const cls = context.getClass();
    const known = this.routeNeeds.get(handler);
    if (known && known.cls === cls) return known;
    const targets = [handler, cls];
    const needs: RouteNeeds = {
      cls,
      public: this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets) === true,
      scopes: this.reflector.getAllAndOverride<Scope[] | undefined>(SCOPES_KEY, targets) ?? [],
    };
    this.routeNeeds.set(handler, needs);
    return needs;
  }
}
