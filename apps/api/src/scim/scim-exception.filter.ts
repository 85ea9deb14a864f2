import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import { ApiExceptionFilter, RouteTable } from '@app/http';
import type { Response } from 'express';
import { ScimError, SCIM_URN } from '@app/domain';

/** The body of every SCIM error: RFC 7644 §3.12, `status` as a string. */
export function scimErrorBody(status: number, detail: string, scimType?: string): Record<string, unknown> {
  return { schemas: [SCIM_URN.error], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

/**
 * Errors of the SCIM controllers. A ScimError is answered with its own status (409 uniqueness
 * has no code in the contract's table, so the shared renderer cannot say it); everything else
 * goes to the shared filter, which already answers SCIM paths in RFC 7644's schema.
 */
@Catch()
export class ScimExceptionFilter implements ExceptionFilter {
  // Router 404/405 never reach a controller's filter, so the shared filter needs no route table here.
  private readonly shared = new ApiExceptionFilter(new RouteTable());

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    if (!(exception instanceof ScimError) || res.headersSent) {
      this.shared.catch(exception, host);
      return;
    }
    for (const [k, v] of Object.entries(exception.headers)) res.setHeader(k, v);
    res.status(exception.status).type('application/scim+json').send(JSON.stringify(scimErrorBody(exception.status, exception.message, exception.scimType)));
  }
}
