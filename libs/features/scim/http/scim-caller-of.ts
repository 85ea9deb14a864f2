import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AuthenticatedRequest } from '@web/auth';
import { ScimCaller } from '../model/scim-caller';

/** The SCIM caller of a write: the connection (its principal), with the request's User-Agent and id for the provisioning log. */
export const ScimWriter = createParamDecorator((_: unknown, ctx: ExecutionContext): ScimCaller => {
  const req = ctx.switchToHttp().getRequest<AuthenticatedRequest & { id?: string }>();
  const p = req.principal!;
  return {
    organisationId: p.organisationId,
    connectionId: p.connectionId,
    scopes: p.scopes,
    userAgent: req.headers['user-agent'] ?? null,
    requestId: req.id ?? null,
  };
});
