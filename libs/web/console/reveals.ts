import { Controller, Get, Injectable, Param, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { ConsoleAccessService, ConsoleViewer } from './console-access.service';
import type { Response } from 'express';
import { ConsoleAccess, ConsoleContext, Ctx, Viewer } from './console-context';
import { ConsoleExceptionFilter } from './console-exception.filter';
import { ConsoleGuard } from './console.guard';
import { ConsoleViews } from './console-views';

/**
 * How the reveal page presents a key made for one purpose (a feature's set-up page, say the SCIM
 * one): its title and crumbs, the values the key goes with (each copyable), where to paste it, a
 * GET to try it with, and the way back. Without it the page presents a partner's key.
 */
export interface KeyPurpose {
  title: string;
  crumbs: Array<{ href: string; label: string }>;
  /** Shown above the key, each with a copy button: e.g. the address the key is used at. */
  facts: Array<{ label: string; value: string }>;
  /** One sentence: where the key is pasted. */
  instruction: string;
  /** A path under the public base that the key may GET, and one sentence on what it answers. */
  tryPath: string;
  trySays: string;
  back: { href: string; label: string };
}

/** A secret shown once: a new key, or a webhook's new signing secret (made with it, or rotated). */
export type RevealPayload =
  | { kind: 'key'; connectionId: string; connectionName: string; key: string; lastFour: string; purpose?: KeyPurpose }
  | {
      kind: 'webhook_secret';
      connectionId: string;
      connectionName: string;
      webhookId: string;
      url: string;
      secret: string;
      /** Present when the secret replaced another: until when the replaced one signs too (null: it stopped at once). */
      rotated?: { previousUntil: string | null };
    };

/**
 * Post-redirect-get for secrets. The POST that makes a key (or a webhook) seals the clear value
 * server-side under the session (ConsoleAccessService.stashReveal) and redirects to
 * /console/reveal/:id; that GET takes the sealed row and deletes it in one statement, so the
 * value is on exactly one page: reloading, going back or opening the address in another tab
 * finds it gone, and nothing is made again.
 */
@Injectable()
export class ConsoleReveals {
  constructor(private readonly access: ConsoleAccessService) {}

  /** Seals the payload for this session; returns where to redirect. */
  async stash(ctx: ConsoleContext, viewer: ConsoleViewer, payload: RevealPayload): Promise<string> {
    const id = await this.access.stashReveal(viewer.sessionId, sessionToken(ctx), payload);
    return `/console/reveal/${id}`;
  }

  take(ctx: ConsoleContext, viewer: ConsoleViewer, id: string): Promise<RevealPayload | null> {
    return this.access.takeReveal<RevealPayload>(viewer.sessionId, sessionToken(ctx), id);
  }
}

function sessionToken(ctx: ConsoleContext): string {
  if (!ctx.sessionToken) throw new Error('a reveal needs the session token');
  return ctx.sessionToken;
}

@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/reveal')
export class RevealController {
  constructor(
    private readonly reveals: ConsoleReveals,
    private readonly views: ConsoleViews,
  ) {}

  @Get(':id')
  @ConsoleAccess({ whileModuleOff: true })
  async show(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Param('id') id: string, @Res() res: Response): Promise<void> {
    const payload = await this.reveals.take(ctx, viewer, id);
    if (!payload) {
      this.views.render(res, ctx, 'reveal-gone', { title: 'This secret is no longer shown' }, 410);
      return;
    }
    if (payload.kind === 'key') {
      const purpose = payload.purpose;
      this.views.render(res, ctx, 'reveal-key', {
        title: purpose?.title ?? 'Your new key',
        crumbs: purpose?.crumbs ?? [
          { href: '/console', label: 'Connections' },
          { href: `/console/connections/${payload.connectionId}`, label: payload.connectionName },
        ],
        reveal: payload,
        facts: purpose?.facts ?? [],
        instruction: purpose?.instruction,
        curl: { insecure: this.views.selfSignedTls, url: `${this.views.publicBaseUrl}${purpose?.tryPath ?? '/v1/me'}` },
        trySays: purpose?.trySays ?? 'This call answers with the connection and its scopes:',
        back: purpose?.back ?? { href: `/console/connections/${payload.connectionId}`, label: `I have copied it: back to ${payload.connectionName}` },
      });
      return;
    }
    this.views.render(res, ctx, 'reveal-webhook', {
      title: payload.rotated ? 'The webhook’s new signing secret' : 'Your new webhook’s signing secret',
      crumbs: [
        { href: '/console', label: 'Connections' },
        { href: `/console/connections/${payload.connectionId}`, label: payload.connectionName },
        { href: `/console/connections/${payload.connectionId}/webhooks`, label: 'Webhooks' },
      ],
      reveal: payload,
    });
  }
}
