import { Injectable } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { DomainError } from '@kernel/core';
import { Metrics, METRICS } from '@kernel/metrics';
import type { Request } from 'express';
import type { Counter } from 'prom-client';
import { BearerResult, readBearer } from './bearer-token';
import { inCidrs, ParsedCidr, parseAddress, parseCidrs, resolveClientIp } from './client-ip';
import { KeyAuthenticator } from './key-authenticator';
import type { CachedKey, Principal } from './principal';
import { RefusedKeyThrottle } from './refused-key-throttle';

export const NO_KEY_MESSAGE = 'No API key was sent. Send the key as "Authorization: Bearer <key>".';
export const BAD_KEY_MESSAGE = 'The API key is malformed or revoked.';
/** Added to BAD_KEY_MESSAGE when the header's form, not the key, is what is wrong. */
export const HEADER_FORM_HINT = 'The header must read "Authorization: Bearer <key>"';

/** The 401 message for a malformed header: the contract's words, and what is wrong with the header's form when that can be told. */
export function badKeyMessage(bearer: Extract<BearerResult, { kind: 'malformed' }>): string {
  if (bearer.scheme === 'none') return `${BAD_KEY_MESSAGE} ${HEADER_FORM_HINT}: the scheme "Bearer " is missing before the key.`;
  if (bearer.scheme) {
    const named = bearer.scheme.other === null ? 'another scheme' : `the scheme "${bearer.scheme.other}"`;
    return `${BAD_KEY_MESSAGE} ${HEADER_FORM_HINT}; this one uses ${named}.`;
  }
  return BAD_KEY_MESSAGE;
}

/** Authorization headers in the request as sent: Node keeps only the first of several in `req.headers`. */
export function authorizationHeaderCount(req: Pick<Request, 'rawHeaders'>): number {
  let n = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].length === 13 && req.rawHeaders[i].toLowerCase() === 'authorization') n++;
  return n;
}

/**
 * A request past the key check carries its `principal`; one refused for its address or the
 * organisation's module (the key itself was good) carries `refusedPrincipal`, so an interface can
 * say whose call it refused (the SCIM provisioning log), and nothing admits it.
 */
export type AuthenticatedRequest = Request & { principal?: Principal; refusedPrincipal?: Principal };

/** Why a call was refused, as `integrations_refused_keys_total` counts it. */
export type RefusalReason =
  'missing' | 'malformed' | 'unknown' | 'revoked' | 'several_headers' | 'throttled' | 'ip_not_allowed' | 'module_off' | 'scope_missing';

/**
 * The key check of the contract's Authentication section, in the order a call is refused:
 * 429 (address throttled) → 400 (more than one Authorization header) → 401 (no key / bad key) →
 * 403 ip_not_allowed → 403 module_off. Several Authorization headers are ambiguous (a proxy may
 * read another than the service does): refused, and counted towards the throttle like a bad key.
 * (403 scope_missing is the guard's: only the matched route knows its scope.) The allow-list is
 * checked before the module so that an outside address learns nothing more.
 *
 * It runs at the front door, before routing and body parsing, so that every call but the public
 * ones is refused alike: an unknown path, a wrong method or a bad body without a valid key answers
 * 401 (and counts towards the throttle), and no body is read for a caller without one.
 */
@Injectable()
export class KeyGate {
  private readonly trusted: ParsedCidr[];
  private readonly refusals: Counter<'reason'>;

  constructor(
    private readonly throttle: RefusedKeyThrottle,
    private readonly authenticator: KeyAuthenticator,
    config: AppConfig,
    metrics: Metrics,
  ) {
    this.trusted = parseCidrs(config.trustedProxies);
    this.refusals = metrics.counter(METRICS.refusedKeys);
  }

  /** Counts a refusal (the guard's scope_missing included). */
  counted<E>(reason: RefusalReason, err: E): E {
    this.refusals.inc({ reason });
    return err;
  }

  /** The caller's address (X-Forwarded-For only through TRUSTED_PROXIES). */
  clientIp(req: Request): string {
    return resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.trusted);
  }

  /** 429 when the caller's address is throttled; for calls that need no key. */
  checkThrottle(req: Request): true | Promise<true> {
    return this.unlessBlocked(this.clientIp(req), () => true);
  }

  /**
   * Puts the key's principal on `req`, or refuses. Synchronous when the key is in the cache (the
   * common case: no promise); a refusal is thrown, or rejected when it had to wait for a lookup
   * or for the throttle's count.
   */
  authenticate(req: AuthenticatedRequest): true | Promise<true> {
    const ip = this.clientIp(req);
    return this.unlessBlocked(ip, () => this.checkKey(req, ip));
  }

  /** `then()` unless the address is throttled (429); synchronous when memory knows. */
  private unlessBlocked<T>(ip: string, then: () => T | Promise<T>): T | Promise<T> {
    const blocked = this.throttle.isBlocked(ip);
    if (blocked === true) throw this.counted('throttled', this.rateLimited());
    if (blocked === false) return then();
    return blocked.then((b) => {
      if (b) throw this.counted('throttled', this.rateLimited());
      return then();
    });
  }

  private checkKey(req: AuthenticatedRequest, ip: string): true | Promise<true> {
    if (authorizationHeaderCount(req) > 1) {
      return this.refuse(
        ip,
        new DomainError('invalid_request', `More than one Authorization header was sent; send exactly one. ${HEADER_FORM_HINT}.`),
        'several_headers',
      );
    }
    const bearer = readBearer(req.headers.authorization);
    if (bearer.kind === 'missing') return this.refuse(ip, this.unauthorised(NO_KEY_MESSAGE), 'missing');
    if (bearer.kind === 'malformed') return this.refuse(ip, this.unauthorised(badKeyMessage(bearer)), 'malformed');
    const found = this.authenticator.lookup(bearer.token);
    return found instanceof Promise ? found.then((f) => this.admit(req, ip, f)) : this.admit(req, ip, found);
  }

  private admit(req: AuthenticatedRequest, ip: string, found: CachedKey | null): true | Promise<never> {
    if (!found) return this.refuse(ip, this.unauthorised(BAD_KEY_MESSAGE), 'unknown');
    if (found.revoked) return this.refuse(ip, this.unauthorised(BAD_KEY_MESSAGE), 'revoked');
    if (found.allowlist.length > 0 && !this.allowed(ip, found.allowlist)) {
      req.refusedPrincipal = found.principal;
      throw this.counted('ip_not_allowed', new DomainError('ip_not_allowed', 'Calls from this address are not allowed by the organisation.'));
    }
    if (!found.moduleOn) {
      req.refusedPrincipal = found.principal;
      throw this.counted(
        'module_off',
        new DomainError('module_off', 'The integrations module is off for this organisation, or the current integrations data policy is not accepted.'),
      );
    }
    req.principal = found.principal;
    this.authenticator.touch(found.principal.keyId);
    return true;
  }

  private allowed(ip: string, allowlist: ParsedCidr[]): boolean {
    const addr = parseAddress(ip);
    return addr !== null && inCidrs(addr, allowlist);
  }

  /** Refuses with `err`, counted towards the address's throttle (429 instead once it is used up). */
  private async refuse(ip: string, err: DomainError, reason: RefusalReason): Promise<never> {
    if (await this.throttle.refuse(ip)) throw this.counted('throttled', this.rateLimited());
    throw this.counted(reason, err);
  }

  private unauthorised(message: string): DomainError {
    return new DomainError('unauthorised', message, { 'WWW-Authenticate': 'Bearer realm="integrations"' });
  }

  private rateLimited(): DomainError {
    return new DomainError('rate_limited', 'Too many calls from this address were refused for a missing or wrong key. Wait for the next minute.', {
      'Retry-After': String(this.throttle.retryAfterSeconds()),
    });
  }
}
