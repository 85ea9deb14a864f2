import { Injectable, Logger } from '@nestjs/common';
import { ErrorAnswer, ErrorDialect, RenderedError } from '@web/http';
import { newNonce, pageHeaders } from './console-security';
import { ConsoleViews } from './console-views';

/** The Integrations section's own path: every address under it is a console page. */
export const CONSOLE_AREA = '/console';

const OWNS = /^\/console(?:[/?#]|$)/i;

/**
 * What the web kit answers for an error raised under /console outside a console page's own
 * handler — an unknown address (404), a method the address does not take (405, with `Allow`), a
 * body the front door refuses — is a console page with the console's headers and
 * Content-Security-Policy, never the API's JSON envelope. The page is the same whoever asks and
 * reads no session: the console's addresses are documented, so a 404 tells nobody anything, and
 * a stray address costs no database read. Its link leads to /console, which signs in first when
 * needed.
 */
@Injectable()
export class ConsoleErrorDialect implements ErrorDialect {
  private readonly logger = new Logger('Console');
  readonly jsonMediaTypes: readonly string[] = [];

  constructor(private readonly views: ConsoleViews) {}

  owns(url: string): boolean {
    return OWNS.test(url);
  }

  answer(err: RenderedError, status: number): ErrorAnswer {
    const [title, detail] = words(err, status);
    const nonce = newNonce();
    const { 'Content-Type': type, ...headers } = pageHeaders(nonce);
    const ctx = { viewer: null, sessionToken: null, csrf: '', nonce, path: '' };
    try {
      return { status, type, headers, body: this.views.html(ctx, 'problem', { title, detail, status, home: true }) };
    } catch (renderErr) {
      this.logger.error({ err: renderErr }, 'console problem page failed to render');
      return { status, type: 'text/plain; charset=utf-8', headers, body: `${title}\n\n${detail}\n` };
    }
  }
}

function words(err: RenderedError, status: number): [string, string] {
  if (status === 404) return ['Page not found', 'There is no such page in the Integrations section. Check the address, or start again from the link below.'];
  if (status === 405) {
    const allowed = err.headers?.Allow;
    return [
      'This page cannot take that request',
      `The address exists, but not for this kind of request (${err.message.split(' ')[0]}). ${allowed ? `It takes ${allowed}. ` : ''}Open it from the Integrations section’s own pages and links.`,
    ];
  }
  if (status >= 500) return ['Something went wrong', err.message];
  return ['That could not be done', err.message];
}
