import { Body, Controller, Get, Logger, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { inCidrs, parseAddress, parseCidrs, Public, resolveClientIp } from '@web/auth';
import { AppConfig } from '@kernel/config';
import { ConsoleAccessService, SESSION_ABSOLUTE_MS } from './console-access.service';
import { Mailer } from '@kernel/mail';
import { parseEmail } from '@kernel/core';
import type { Request, Response } from 'express';
import { ConsoleAccess, ConsoleContext, ConsoleRefusal, Ctx } from './console-context';
import { ConsoleExceptionFilter } from './console-exception.filter';
import { ConsoleGuard } from './console.guard';
import { SESSION_COOKIE, setCookie } from './console-security';
import { ConsoleViews } from './console-views';
import { SignInThrottle } from './sign-in-throttle';

const ENDED: Record<string, string> = {
  signed_out: 'You have signed out.',
  idle: 'You were signed out after 30 minutes without activity. Sign in again to carry on.',
  expired: 'Sessions last 12 hours at most. Sign in again to carry on.',
  no_access: 'You were signed out: your account can no longer manage this organisation’s integrations.',
};

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Signing in without a password: a one-time link, mailed to an address (the answer is the same
 * whether or not the address belongs to anyone) or handed over by the platform
 * (`admin console link --person ID`). Opening a link shows a button; pressing it uses the link
 * and opens the session, so a mail scanner that follows links cannot use it up.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console')
export class SignInController {
  private readonly logger = new Logger('Console');

  constructor(
    private readonly access: ConsoleAccessService,
    private readonly views: ConsoleViews,
    private readonly mailer: Mailer,
    private readonly throttle: SignInThrottle,
    private readonly config: AppConfig,
  ) {}

  @Get('sign-in')
  @ConsoleAccess({ anonymous: true })
  signInForm(@Ctx() ctx: ConsoleContext, @Query('ended') ended: unknown, @Res() res: Response): void {
    this.views.render(res, ctx, 'sign-in', { ended: ENDED[text(ended)] });
  }

  @Post('sign-in')
  @ConsoleAccess({ anonymous: true })
  async askForLink(@Ctx() ctx: ConsoleContext, @Body() form: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    const given = text(form?.email).slice(0, 300);
    let email: string;
    try {
      email = parseEmail(given).address;
    } catch {
      return this.views.render(res, ctx, 'sign-in', { email: given, error: 'Enter an email address such as name@example.com.' }, 422);
    }
    const wait = await this.throttle.take(email, this.clientIp(req));
    if (wait > 0) {
      const minutes = Math.max(1, Math.ceil(wait / 60));
      res.setHeader('Retry-After', String(wait));
      throw new ConsoleRefusal(
        429,
        'Too many sign-in links asked for',
        `Too many sign-in links were asked for just now. Wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`,
      );
    }
    // Answered before anything is looked up or mailed, so the time taken says nothing either.
    this.views.render(res, ctx, 'sign-in-sent', { email });
    void this.mailLinks(email).catch((err: unknown) => this.logger.error({ err }, 'console sign-in mail failed'));
  }

  @Get('sign-in/link')
  @ConsoleAccess({ anonymous: true })
  async linkPage(@Ctx() ctx: ConsoleContext, @Query('token') token: unknown, @Res() res: Response): Promise<void> {
    if (!(await this.access.linkUsable(token))) throw unusableLink();
    this.views.render(res, ctx, 'sign-in-link', { token: text(token) });
  }

  @Post('sign-in/link')
  @ConsoleAccess({ anonymous: true })
  async useLink(@Body() form: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    const opened = await this.access.redeemLink(form?.token);
    if (!opened) throw unusableLink();
    const { viewer, sessionToken } = opened;
    if (viewer.ipAllowlist.length > 0) {
      const addr = parseAddress(this.clientIp(req));
      if (addr === null || !inCidrs(addr, parseCidrs(viewer.ipAllowlist))) {
        await this.access.end(viewer.sessionId);
        throw new ConsoleRefusal(
          403,
          'Not from this network',
          `${viewer.organisationName} lets its integrations be managed only from the network addresses on its allow-list, and yours is not on it. Connect from your organisation’s network (or its VPN) and ask for a new link.`,
        );
      }
    }
    setCookie(res, SESSION_COOKIE, sessionToken, SESSION_ABSOLUTE_MS / 1000);
    this.logger.log(`console session opened for person ${viewer.personId} (organisation ${viewer.organisationId})`);
    res.redirect(303, '/console');
  }

  @Post('sign-out')
  @ConsoleAccess({ whileModuleOff: true })
  async signOut(@Ctx() ctx: ConsoleContext, @Res() res: Response): Promise<void> {
    if (ctx.viewer) await this.access.end(ctx.viewer.sessionId);
    setCookie(res, SESSION_COOKIE, '', 0);
    res.redirect(303, '/console/sign-in?ended=signed_out');
  }

  private async mailLinks(email: string): Promise<void> {
    for (const person of await this.access.eligibleByEmail(email)) {
      const { token } = await this.access.issueLink(person.personId, 'mail');
      const url = `${this.config.publicBaseUrl}/console/sign-in/link?token=${token}`;
      await this.mailer.send({
        to: person.email,
        subject: 'Your sign-in link for Integrations',
        text:
          `Hello ${person.name || person.email},\n\n` +
          `Open this link to sign in to your organisation's Integrations section:\n\n${url}\n\n` +
          `It works once, within 15 minutes. If you did not ask for it, ignore this mail: nobody can sign in without the link.\n`,
      });
    }
  }

  private clientIp(req: Request): string {
    return resolveClientIp(req.socket.remoteAddress, req.headers['x-forwarded-for'], parseCidrs(this.config.trustedProxies));
  }
}

const unusableLink = () =>
  new ConsoleRefusal(
    410,
    'This sign-in link cannot be used',
    'Sign-in links work once, within 15 minutes. This one has been used, has expired, or belongs to someone who can no longer manage integrations. Ask for a new one.',
  );
