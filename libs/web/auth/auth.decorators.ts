import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiExtension } from '@nestjs/swagger';
import type { Scope } from '@kernel/core';
import type { Principal } from './principal';

export const SCOPES_KEY = 'auth:scopes';
export const PUBLIC_KEY = 'auth:public';
export const UNTHROTTLED_KEY = 'auth:unthrottled';

/**
 * The scope a call needs; none means any valid key. The OpenAPI description reads it too
 * (`x-scopes`, removed once read): only a call that needs a scope lists 403 scope_missing.
 */
export const RequireScopes = (...scopes: Scope[]) => applyDecorators(SetMetadata(SCOPES_KEY, scopes), ApiExtension('x-scopes', scopes));

/**
 * No key at all (the OpenAPI document, the invitation page, health probes). The refused-key
 * throttle still applies (the contract: "all calls"), except with `{ throttle: false }`, which
 * only the health probes and the Integrations section's pages take: a load balancer's probes must
 * not fail because some client behind the same address sent wrong keys, and a manager behind the
 * same address (one office NAT) must still reach the console to fix that client's key (the console
 * throttles its own sign-in mails).
 */
export const Public = (options: { throttle?: boolean } = {}) =>
  options.throttle === false ? applyDecorators(SetMetadata(PUBLIC_KEY, true), SetMetadata(UNTHROTTLED_KEY, true)) : SetMetadata(PUBLIC_KEY, true);

/** The authenticated connection of a request the key check let through. */
export const principalOf = (req: object): Principal => (req as { principal: Principal }).principal;

/** The authenticated connection of the current call. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => principalOf(ctx.switchToHttp().getRequest()));
