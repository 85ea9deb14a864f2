import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Response } from 'express';
import { Observable } from 'rxjs';

export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

/** SCIM answers are application/scim+json (RFC 7644 §3.1); express keeps a type set before res.json. */
@Injectable()
export class ScimContentTypeInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    context.switchToHttp().getResponse<Response>().setHeader('Content-Type', SCIM_CONTENT_TYPE);
    return next.handle();
  }
}
