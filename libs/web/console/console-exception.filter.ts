import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { DomainError } from '@kernel/core';
import { STATUS_BY_CODE } from '@web/http';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import { SignInRequired, ConsoleRefusal, ConsoleRequest } from './console-context';
import { newNonce, pageHeaders } from './console-security';
import { ConsoleViews } from './console-views';

/**
 * Every console answer is a page: redirects (303 after a POST), refusals in words, a domain
 * error with its message, and anything unexpected as a 500 page with an error id that is also
 * in the log. Never the API's JSON envelope.
 */
@Catch()
export class ConsoleExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Console');

  constructor(private readonly views: ConsoleViews) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<ConsoleRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    if (err instanceof SignInRequired) {
      res.redirect(req.method === 'GET' || req.method === 'HEAD' ? 302 : 303, err.location);
      return;
    }
    const ctx = req.console ?? { viewer: null, sessionToken: null, csrf: '', nonce: newNonce(), path: req.path };
    let [status, title, detail] = [500, 'Something went wrong', ''];
    if (err instanceof ConsoleRefusal) [status, title, detail] = [err.status, err.title, err.detail];
    else if (err instanceof DomainError) [status, title, detail] = [STATUS_BY_CODE[err.code] ?? 400, 'That could not be done', err.message];
    else if (err instanceof HttpException && err.getStatus() < 500) {
      status = err.getStatus();
      [title, detail] = status === 404 ? ['Page not found', 'There is no such page in the Integrations section.'] : ['That could not be done', err.message];
    } else {
      const errorId = randomUUID();
      this.logger.error({ err, errorId }, `console page failed ${errorId}`);
      detail = `Something went wrong on our side; please try again in a moment. If it keeps happening, tell your platform operator this error id: ${errorId}.`;
    }
    res.status(status).set(pageHeaders(ctx.nonce));
    try {
      res.send(this.views.html(ctx, 'problem', { title, detail, status }));
    } catch (renderErr) {
      this.logger.error({ err: renderErr }, 'console problem page failed to render');
      res.type('text/plain').send(`${title}\n\n${detail}\n`);
    }
  }
}
