import { Body, Controller, Get, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError, notFound } from '@kernel/core';
import { ConnectionEntity } from '@features/connections';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
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
import { MAX_BULK_RESEND } from '../delivery-log.service';
import { WebhookEnableService } from '../webhook-enable.service';
import { WebhookEntity } from '../webhook.entity';
import { WebhooksService } from '../webhooks.service';
import { parseSince, SINCE_EXAMPLE, sinceProblem, sinceText } from '@web/console';
import { webhookCrumbs } from './webhooks.controller';

const view = featureViews(__dirname);

interface EnableForm {
  since: string;
}

/**
 * "Switch back on" for a switched-off webhook: its own page, with an optional time from which the
 * deliveries given up are sent again. The same service and rules as `POST /v1/webhooks/{id}/enable`
 * with `recover_since`, confined to the viewer's organisation and the connection's webhooks; the
 * Webhooks page then says how many were resent.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/connections/:id/webhooks/:wid/enable')
export class WebhookEnablePageController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly enabling: WebhookEnableService,
    private readonly views: ConsoleViews,
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
    if (!viewer.moduleOn || conn.revokedAt || !hook.switchedOffAt) return redirectTo(res, listPath(conn));
    this.render(res, ctx, conn, hook, { since: '' }, null);
  }

  @Post()
  async enable(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Body() body: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    if (conn.revokedAt) throw new DomainError('validation_failed', 'This connection is revoked: its webhooks are stopped and none can be switched back on.');
    const values = { since: formText(body, 'recover_since', 40) };
    let since: Date | undefined;
    if (values.since.trim() !== '') {
      const parsed = parseSince(values.since);
      if (!parsed) return this.render(res, ctx, conn, hook, values, sinceProblem(values.since, 'the time to resend from'), 422);
      try {
        this.enabling.checkRecoverSince(parsed);
      } catch (err) {
        if (!(err instanceof DomainError) || err.code !== 'validation_failed') throw err;
        const problem = err.message.replace(/^recover_since: /, '');
        return this.render(res, ctx, conn, hook, values, `The time to resend from ${problem}.`, 422);
      }
      since = parsed;
    }
    const done = await this.enabling.enable(conn.id, conn.organisationId, hook.id, since);
    const r = done.recovery;
    const query = !done.switchedOn
      ? 'done=already-on'
      : !r
        ? 'done=enabled'
        : r.resent === 0
          ? 'done=enabled-none'
          : `done=${r.more ? 'enabled-more' : 'enabled-resent'}&resent=${r.resent}`;
    return redirectTo(res, `${listPath(conn)}?${query}`);
  }

  private async find(viewer: ConsoleViewer, id: string, wid: string): Promise<{ conn: ConnectionEntity; hook: WebhookEntity }> {
    const found = await this.webhooks.findWithConnection(viewer.organisationId, id, wid);
    if (!found) throw notFound('webhook');
    return found;
  }

  private render(res: Response, ctx: ConsoleContext, conn: ConnectionEntity, hook: WebhookEntity, values: EnableForm, problem: string | null, status = 200) {
    this.views.render(
      res,
      ctx,
      view('enable'),
      {
        title: 'Switch the webhook back on',
        crumbs: webhookCrumbs(conn),
        hook,
        values,
        problem,
        failingSince: hook.failingSince ? sinceText(hook.failingSince) : null,
        sinceExample: SINCE_EXAMPLE,
        maxResend: MAX_BULK_RESEND,
        action: `${listPath(conn)}/${hook.id}/enable`,
        cancel: listPath(conn),
      },
      status,
    );
  }
}

const listPath = (conn: ConnectionEntity) => `/console/connections/${conn.id}/webhooks`;
