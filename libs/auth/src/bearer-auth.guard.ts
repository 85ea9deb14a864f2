import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppConfig } from '@app/config';
import { DomainError, Scope } from '@app/domain';
import type { Request } from 'express';
import { PUBLIC_KEY, SCOPES_KEY } from './auth.decorators';
import { readBearer } from './bearer-token';
import { inCidrs, ParsedCidr, parseAddress, parseCidrs, resolveClientIp } from './client-ip';
import { KeyAuthenticator } from './key-authenticator';
import type { CachedKey } from './principal';
import { RefusedKeyThrottle } from './refused-key-throttle';

interface RouteNeeds {
  cls: object;
  public: boolean;
  scopes: Scope[];
}

export const NO_KEY_MESSAGE = 'No API key was sent. Send the key as "Authorization: Bearer <key>".';
export const BAD_KEY_MESSAGE = 'The API key is malformed or revoked.';

/**
 * The contract's Authentication section, in the order a call is refused:
 * 429 (address throttled) → 401 (no key / bad key) → 403 ip_not_allowed → 403 module_off → 403 scope_missing.
 * The allow-list is checked before the module so that an outside address learns nothing more.
 */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  private readonly trusted;
  /** What each handler's decorators ask for, read once: metadata does not change after start-up. */
  private readonly routeNeeds = new WeakMap<object, RouteNeeds>();

  constructor(
    private readonly reflector: Reflector,
    private readonly throttle: RefusedKeyThrottle,
    private readonly authenticator: KeyAuthenticator,
    config: AppConfig,
  ) {
    this.trusted = parseCidrs(config.trustedProxies);
  }

  /** Synchronous when the key is in the cache: no promise of its own on the common path. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const needs = this.needsOf(context);
    if (needs.public) return true;
    const req = context.switchToHttp().getRequest<Request & { principal?: unknown }>();
    const ip = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.trusted);
    if (this.throttle.isBlocked(ip)) throw this.rateLimited();

    const bearer = readBearer(req.headers.authorization);
    if (bearer.kind === 'missing') return this.refuse(ip, NO_KEY_MESSAGE);
    const found = bearer.kind === 'token' ? this.authenticator.lookup(bearer.token) : null;
    return found instanceof Promise ? found.then((f) => this.admit(req, ip, needs, f)) : this.admit(req, ip, needs, found);
  }

  private admit(req: Request & { principal?: unknown }, ip: string, needs: RouteNeeds, found: CachedKey | null): true | Promise<never> {
    if (!found || found.revoked) return this.refuse(ip, BAD_KEY_MESSAGE);
    if (found.allowlist.length > 0 && !this.allowed(ip, found.allowlist)) {
      throw new DomainError('ip_not_allowed', 'Calls from this address are not allowed by the organisation.');
    }
    if (!found.moduleOn) {
      throw new DomainError(
        'module_off',
        'The integrations module is off for this organisation, or the current integrations data policy is not accepted.',
      );
    }
    const missing = needs.scopes.filter((s) => !found.principal.scopes.includes(s));
    if (missing.length > 0) {
      throw new DomainError('scope_missing', `This call needs the scope ${missing.join(', ')}, which the connection does not hold.`);
    }
    req.principal = found.principal;
    this.authenticator.touch(found.principal.keyId);
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

  private allowed(ip: string, allowlist: ParsedCidr[]): boolean {
    const addr = parseAddress(ip);
    return addr !== null && inCidrs(addr, allowlist);
  }

  private async refuse(ip: string, message: string): Promise<never> {
    if (await this.throttle.refuse(ip)) throw this.rateLimited();
    throw new DomainError('unauthorised', message, { 'WWW-Authenticate': 'Bearer realm="integrations"' });
  }

  private rateLimited(): DomainError {
    return new DomainError(
      'rate_limited',
      'Too many calls from this address were refused for a missing or wrong key. Wait for the next minute.',
      { 'Retry-After': String(this.throttle.retryAfterSeconds()) },
    );
  }
}
