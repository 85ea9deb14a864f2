import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Scope } from '@app/domain';
import type { Principal } from './principal';

export const SCOPES_KEY = 'auth:scopes';
export const PUBLIC_KEY = 'auth:public';

/** The scope a call needs; none means any valid key. */
export const RequireScopes = (...scopes: Scope[]) => SetMetadata(SCOPES_KEY, scopes);

/** No key at all (the OpenAPI document, health probes). */
export const Public = () => SetMetadata(PUBLIC_KEY, true);

/** The authenticated connection of a request the guard let through. */
export const principalOf = (req: object): Principal => (req as { principal: Principal }).principal;

/** The authenticated connection of the current call. */
export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal => principalOf(ctx.switchToHttp().getRequest()),
);
