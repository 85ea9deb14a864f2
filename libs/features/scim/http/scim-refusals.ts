import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { AuthenticatedRequest } from '@web/auth';
import { ErrorAnswer } from '@web/http';
import type { Request } from 'express';
import { scimRequestShape } from '../model/provisioning-event';
import { ProvisioningLogService } from '../provisioning-log.service';
import { SCIM_REFUSALS_LOCAL, ScimRefusalListener } from './scim-errors';

/**
 * Logs SCIM's refusals: every 4xx the SCIM dialect answers for a known connection (a key that was
 * good, even if the address or the module then refused it), after the answer is sent. Not logged:
 * a 401 (no connection is known: the key is unknown, revoked or missing), and a 429 (the rate
 * limit keeps a flood off the database; `integrations_rate_limited_total` counts them).
 */
@Injectable()
export class ScimRefusals implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly log: ProvisioningLogService,
  ) {}

  onModuleInit(): void {
    const app = this.adapterHost.httpAdapter?.getInstance?.() as { locals?: Record<string, unknown> } | undefined;
    if (app?.locals) app.locals[SCIM_REFUSALS_LOCAL] = this.listener;
  }

  private readonly listener: ScimRefusalListener = (req: Request, answer: ErrorAnswer) => {
    if (answer.status < 400 || answer.status >= 500 || answer.status === 401 || answer.status === 429) return;
    const r = req as AuthenticatedRequest & { id?: string };
    const principal = r.principal ?? r.refusedPrincipal;
    if (!principal) return;
    let body: { scimType?: unknown; detail?: unknown } = {};
    try {
      body = JSON.parse(answer.body) as typeof body;
    } catch {
      // Every SCIM error body is JSON; a detail-less row is still worth keeping.
    }
    const shape = scimRequestShape(req.method, req.originalUrl ?? req.url);
    const header = req.headers['user-agent'];
    this.log.refused(
      {
        organisationId: principal.organisationId,
        connectionId: principal.connectionId,
        scopes: principal.scopes,
        userAgent: header ?? null,
        requestId: r.id ?? null,
      },
      {
        ...shape,
        status: answer.status,
        scimType: typeof body.scimType === 'string' ? body.scimType : null,
        detail: typeof body.detail === 'string' ? body.detail : null,
      },
    );
  };
}
