import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, NotFoundException } from '@nestjs/common';
import { DomainError, ErrorCode } from '@kernel/core';
import { isDatabaseUnavailable } from '@kernel/database';
import { isRedisUnavailable } from '@kernel/redis';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { RenderedError, renderError } from './error-render';
import { RouteTable } from './route-table';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorised',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'invalid_request',
  415: 'invalid_request',
  429: 'rate_limited',
};

/**
 * The one place where errors become answers. Domain errors carry their contract code; the
 * router's 404 becomes 405 when the path exists with other methods; anything unexpected is a
 * 500 with an opaque message and an error id that the log records with the stack.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly routes: RouteTable) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    if (res.headersSent) {
      this.logger.error({ err: exception, requestId: (req as { id?: string }).id }, 'error after the answer was sent');
      return;
    }
    renderError(req, res, this.classify(exception, req));
  }

  classify(exception: unknown, req: Request): RenderedError {
    if (exception instanceof DomainError) {
      // The error itself rides along for the dialect of the interface answering (see ErrorDialect).
      return { code: exception.code, message: exception.message, headers: exception.headers, cause: exception };
    }
    if (exception instanceof NotFoundException) {
      const allowed = this.routes.allowedMethods(req.path);
      if (allowed.length > 0 && !allowed.includes(req.method)) {
        return {
          code: 'method_not_allowed',
          message: `${req.method} is not allowed on this path. Allowed: ${allowed.join(', ')}.`,
          headers: { Allow: allowed.join(', ') },
        };
      }
      return { code: 'not_found', message: 'No such path.' };
    }
    if (exception instanceof HttpException && CODE_BY_STATUS[exception.getStatus()]) {
      const status = exception.getStatus();
      const message = status === 413 ? 'The request body is too large.' : exception.message;
      return { code: CODE_BY_STATUS[status], message };
    }
    if (isRedisUnavailable(exception) || isDatabaseUnavailable(exception)) {
      // A call that cannot work without Redis fails fast (see RedisModule) and says when to try again;
      // so does one the database could not take (every pooled connection busy until the pooler's
      // query_wait_timeout, a restart): the contract's only 5xx is 500, so it is that, with Retry-After.
      this.logger.warn(`answered 500 with Retry-After: ${(exception as Error).message}`);
      return {
        code: 'server_error',
        message: 'A service this call needs is unreachable for the moment. Try again in a few seconds.',
        headers: { 'Retry-After': '5' },
      };
    }
    const errorId = randomUUID();
    this.logger.error(
      { err: exception, errorId, requestId: (req as { id?: string }).id },
      `unhandled error ${errorId}: ${(exception as Error)?.message ?? String(exception)}`,
    );
    return { code: 'server_error', message: `Something went wrong on our side. Error id: ${errorId}.` };
  }
}
