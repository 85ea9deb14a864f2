import { Body, Controller, Get, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError, notFound } from '@kernel/core';
import { ConnectionEntity } from '@features/connections';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleReveals,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  formText,
  redirectTo,
  Viewer,
} from '@web/console';
import { DigitsIdPipe } from '@web/http';
import type { Response } from 'express';
import { DEFAULT_SECRET_OVERLAP_SECONDS } from '../model/secret-rotation';
import { WebhookSecretRotationService } from '../webhook-secret-rotation.service';
import { WebhookEntity } from '../webhook.entity';
import { WebhooksService } from '../webhooks.service';
import { webhookCrumbs } from './webhooks.controller';

const view = featureViews(__dirname);

/** The overlaps the form offers (seconds → words), the API's default preselected. */
export const OVERLAP_CHOICES: Array<{ seconds: number; label: string }> = [
  { seconds: 0, label: 'None: the current secret stops at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: DEFAULT_SECRET_OVERLAP_SECONDS, label: '24 hours' },
  { seconds: 3 * 86400, label: '3 days' },
  { seconds: 7 * 86400, label: '7 days' },
];

interface RotateForm {
  currentSecret: string;
  overlap: number;
}

/**
 * A webhook's "Rotate secret" page: the current secret pasted in and the overlap chosen, the new
 * secret then shown once (the console's reveal). The same rules as the API's rotate-secret
 * (WebhookSecretRotationService), confined to the viewer's organisation and the connection's webhooks.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/connections/:id/webhooks/:wid/rotate-secret')
export class SecretRotationPageController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly rotation: WebhookSecretRotationService,
    private readonly views: ConsoleViews,
    private readonly reveals: ConsoleReveals,
  ) {}

  @Get()
  async form(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    if (!viewer.moduleOn || conn.revokedAt) return redirectTo(res, `/console/connections/${conn.id}/webhooks`);
    this.render(res, ctx, conn, hook, { currentSecret: '', overlap: DEFAULT_SECRET_OVERLAP_SECONDS }, null);
  }

  @Post()
  async rotate(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Body() body: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    if (conn.revokedAt) throw new DomainError('validation_failed', 'This connection is revoked: its webhooks are stopped and their secrets cannot be rotated.');
    const chosen = Number(formText(body, 'overlap', 10));
    const overlap = OVERLAP_CHOICES.some((c) => c.seconds === chosen) ? chosen : DEFAULT_SECRET_OVERLAP_SECONDS;
    const currentSecret = formText(body, 'current_secret', 200).trim();
    if (!currentSecret) {
      return this.render(res, ctx, conn, hook, { currentSecret, overlap }, 'Paste the webhook’s current signing secret (it begins with whsec_).', 422);
    }
    let rotated;
    try {
      rotated = await this.rotation.rotate(conn.id, hook.id, currentSecret, overlap);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'validation_failed' || !err.message.startsWith('current_secret: ')) throw err;
      const problem =
        'This is not the webhook’s current signing secret. Check that you pasted all of it. ' +
        'A secret that is lost cannot be rotated: remove the webhook and add it again.';
      // The pasted value is never shown back.
      return this.render(res, ctx, conn, hook, { currentSecret: '', overlap }, problem, 422);
    }
    const location = await this.reveals.stash(ctx, viewer, {
      kind: 'webhook_secret',
      connectionId: conn.id,
      connectionName: conn.name,
      webhookId: hook.id,
      url: hook.url,
      secret: rotated.secret,
      rotated: { previousUntil: rotated.previousSecretExpiresAt?.toISOString() ?? null },
    });
    return redirectTo(res, location);
  }

  private async find(viewer: ConsoleViewer, id: string, wid: string): Promise<{ conn: ConnectionEntity; hook: WebhookEntity }> {
    const found = await this.webhooks.findWithConnection(viewer.organisationId, id, wid);
    if (!found) throw notFound('webhook');
    return found;
  }

  private render(res: Response, ctx: ConsoleContext, conn: ConnectionEntity, hook: WebhookEntity, values: RotateForm, problem: string | null, status = 200) {
    this.views.render(
      res,
      ctx,
      view('rotate-secret'),
      {
        title: 'Rotate the signing secret',
        crumbs: webhookCrumbs(conn),
        conn,
        hook,
        values,
        problem,
        choices: OVERLAP_CHOICES,
        action: `/console/connections/${conn.id}/webhooks/${hook.id}/rotate-secret`,
        cancel: `/console/connections/${conn.id}/webhooks`,
      },
      status,
    );
  }
}
