import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { inCidrs, parseAddress, parseCidrs, ParsedCidr, resolveClientIp } from '@web/auth';
import { AppConfig } from '@kernel/config';
import { ConsoleAccessService, ConsoleViewer } from './console-access.service';
import type { Response } from 'express';
import { CONSOLE_ACCESS, ConsoleAccessRule, SignInRequired, ConsoleRefusal, ConsoleRequest } from './console-context';
import { ConsoleSecret } from './console-secret';
import {
  CSRF_FIELD,
  csrfToken,
  csrfValid,
  newNonce,
  newPreSessionId,
  PRE_SESSION_COOKIE,
  readCookie,
  sameOrigin,
  SESSION_COOKIE,
  setCookie,
} from './console-security';

const PRE_SESSION_PATTERN = /^[A-Za-z0-9_-]{32}$/;

/**
 * The door of every console page. For each request: a fresh CSP nonce; for POST, the Origin
 * must be this site's and the form's CSRF token must match the session (or, before sign-in, the
 * pre-session cookie). Then, unless the route is a sign-in page: the session cookie must name a
 * live session of a person who may still use the console (read anew from Postgres on every
 * load), from an address the organisation's allow-list admits; changes need the module on
 * (or the route's `whileModuleOff`), the data policy's needs `organisation.own`.
 */
@Injectable()
export class ConsoleGuard implements CanActivate {
  private readonly trusted: ParsedCidr[];

  constructor(
    private readonly reflector: Reflector,
    private readonly access: ConsoleAccessService,
    private readonly secret: ConsoleSecret,
    private readonly config: AppConfig,
  ) {
    this.trusted = parseCidrs(config.trustedProxies);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ConsoleRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const rule = this.reflector.getAllAndOverride<ConsoleAccessRule | undefined>(CONSOLE_ACCESS, [context.getHandler(), context.getClass()]) ?? {};
    const write = req.method !== 'GET' && req.method !== 'HEAD';
    const nonce = newNonce();
    req.console = { viewer: null, sessionToken: null, csrf: '', nonce, path: req.path };
    if (write && !sameOrigin(req, this.config.publicBaseUrl)) {
      throw new ConsoleRefusal(
        403,
        'This form was sent from another site',
        'The console only takes forms sent from its own pages. Open the page again and send the form from there.',
      );
    }
    const key = await this.secret.get();
    const given = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];

    if (rule.anonymous) {
      let pre = readCookie(req, PRE_SESSION_COOKIE);
      if (!pre || !PRE_SESSION_PATTERN.test(pre)) {
        if (write) throw expiredForm();
        pre = newPreSessionId();
        setCookie(res, PRE_SESSION_COOKIE, pre, 3600);
      }
      if (write && !csrfValid(key, `pre:${pre}`, given)) throw expiredForm();
      req.console.csrf = csrfToken(key, `pre:${pre}`);
      return true;
    }

    const token = readCookie(req, SESSION_COOKIE);
    const found = await this.access.lookup(token);
    if ('ended' in found) {
      if (token !== undefined) setCookie(res, SESSION_COOKIE, '', 0);
      throw new SignInRequired(token === undefined ? '/console/sign-in' : `/console/sign-in?ended=${found.ended}`);
    }
    const viewer = found.viewer;
    this.checkAddress(req, viewer);
    if (write && !csrfValid(key, `session:${viewer.sessionId}`, given)) throw expiredForm();
    if (rule.owner && !viewer.isOwner) {
      throw new ConsoleRefusal(
        403,
        'Only the organisation’s owners can do this',
        'This page needs the organisation.own permission, which your group does not hold.',
      );
    }
    if (write && !viewer.moduleOn && !rule.whileModuleOff) {
      throw new ConsoleRefusal(
        403,
        'Integrations are off for your organisation',
        viewer.moduleEnabled
          ? 'Your organisation has not accepted the current integrations data policy, so nothing can be changed here until an owner accepts it on the Data policy page.'
          : 'The integrations module is switched off for your organisation, so nothing can be changed here. Ask the platform’s operator to switch it on.',
      );
    }
    req.console.viewer = viewer;
    req.console.sessionToken = token ?? null;
    req.console.csrf = csrfToken(key, `session:${viewer.sessionId}`);
    return true;
  }

  /** The organisation's allow-list holds the console as it holds the organisation's connections. */
  private checkAddress(req: ConsoleRequest, viewer: ConsoleViewer): void {
    if (viewer.ipAllowlist.length === 0) return;
    const ip = resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], this.trusted);
    const addr = parseAddress(ip);
    if (addr !== null && inCidrs(addr, parseCidrs(viewer.ipAllowlist))) return;
    throw new ConsoleRefusal(
      403,
      'Not from this network',
      `${viewer.organisationName} lets its integrations be managed only from the network addresses on its allow-list, and ${ip} is not on it. Connect from your organisation’s network (or its VPN) and try again.`,
    );
  }
}

const expiredForm = () =>
  new ConsoleRefusal(
    403,
    'This form has expired',
    'The form’s security token is missing or out of date (for example after signing in again in another tab). Go back, reload the page and send it again.',
  );
