import { Body, Controller, Get, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError } from '@kernel/core';
import { ConnectionEntity, ConnectionsService } from '@features/connections';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleReveals,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  formList,
  formText,
  noticeFor,
  redirectTo,
  Viewer,
} from '@web/console';
import { DeliveryLogService } from '../delivery-log.service';
import { MAX_WEBHOOKS_PER_CONNECTION, WebhooksService } from '../webhooks.service';
import { TEST_INTERVAL_MS, WebhookTestService } from '../webhook-test.service';
import { WebhookEntity } from '../webhook.entity';
import { EVENT_SCOPES, SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { ApiValidationPipe, DigitsIdPipe } from '@web/http';
import type { Response } from 'express';
import { CreateWebhookDto } from '../http/dto/create-webhook.dto';
import { enabledNotice } from './enable-notices';

const view = featureViews(__dirname);

/** One line on each event, for the form's checkboxes. */
const EVENT_LINES: Record<string, string> = {
  'conversation.ended': 'An interpreted conversation has ended (sent once it has at least one turn).',
  'summary.ready': 'The summary of a conversation is ready to read.',
  'document.translated': 'A document has been translated into one of its languages.',
  'user.joined': 'A person has joined your organisation.',
};

const NOTICES: Record<string, string> = {
  removed: 'The webhook was removed: nothing more is sent to it, and its deliveries still waiting were given up.',
};

/** The fields of the add form, as the API's own validation names them. */
const FORM_FIELDS: Record<string, string> = { url: 'url', events: 'events', connection: 'form' };

/** The REST API's body validation (the CreateWebhookDto rules), run on the form's values: one rule, one message. */
const validation = new ApiValidationPipe();

export interface WebhookFormValues {
  url: string;
  events: string[];
}

export type FormProblems = Record<string, string>;

/**
 * A validation_failed refusal (the DTO's or the domain's), as messages next to the form's fields.
 * The API's message reads `<field>: <problem>[; <field>: <problem>]`: each problem is shown as the
 * API words it, after the field's name in the form's words. Null when it is not a form problem.
 */
export function webhookFormProblems(err: unknown): FormProblems | null {
  if (!(err instanceof DomainError) || err.code !== 'validation_failed') return null;
  const problems: FormProblems = {};
  for (const part of err.message.split(/; (?=[\w.[\]]+: )/)) {
    const colon = part.indexOf(': ');
    const domainField = colon > 0 ? part.slice(0, colon).replace(/\[\d+\]$/, '') : '';
    const field = FORM_FIELDS[domainField.split('.')[0]];
    if (!field) return null;
    const problem = part.slice(colon + 2);
    const label = field === 'url' ? 'The address' : field === 'events' ? 'Events' : 'This connection';
    const sentence = `${label} ${problem}${/[.!?]$/.test(problem) ? '' : '.'}`;
    problems[field] = problems[field] ? `${problems[field]} ${sentence}` : sentence;
  }
  return problems;
}

/**
 * A connection's Webhooks page: its webhooks, adding one (the secret shown once), removing one
 * and the test call. Every change goes through WebhooksService and WebhookTestService with the
 * REST API's own validation, confined to the viewer's organisation.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/connections/:id/webhooks')
export class WebhooksPageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly webhooks: WebhooksService,
    private readonly tests: WebhookTestService,
    private readonly log: DeliveryLogService,
    private readonly views: ConsoleViews,
    private readonly reveals: ConsoleReveals,
  ) {}

  @Get()
  async list(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Query('done') done: unknown,
    @Query('tested') tested: unknown,
    @Query('resent') resent: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    const testResult = typeof tested === 'string' ? await this.testResult(viewer, conn, tested) : null;
    await this.renderList(res, ctx, viewer, conn, { notice: noticeFor(NOTICES, done) ?? enabledNotice(done, resent), testResult });
  }

  @Post()
  async create(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Body() form: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.changeable(viewer, id);
    const values: WebhookFormValues = { url: formText(form, 'url', 4096), events: formList(form, 'events') };
    let made: { webhook: WebhookEntity; secret: string };
    try {
      const body = (await validation.transform(values, { type: 'body', metatype: CreateWebhookDto })) as CreateWebhookDto;
      made = await this.webhooks.create({ organisationId: conn.organisationId, connectionId: conn.id, scopes: conn.scopes }, body);
    } catch (err) {
      const problems = webhookFormProblems(err);
      if (!problems) throw err;
      return this.renderList(res, ctx, viewer, conn, { values, problems }, 422);
    }
    const location = await this.reveals.stash(ctx, viewer, {
      kind: 'webhook_secret',
      connectionId: conn.id,
      connectionName: conn.name,
      webhookId: made.webhook.id,
      url: made.webhook.url,
      secret: made.secret,
    });
    return redirectTo(res, location);
  }

  @Post(':wid/test')
  async test(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.changeable(viewer, id);
    try {
      const answer = await this.tests.test({ organisationId: conn.organisationId, connectionId: conn.id }, wid);
      return redirectTo(res, `/console/connections/${conn.id}/webhooks?tested=${answer.deliveryId}#test-result`);
    } catch (err) {
      if (!(err instanceof DomainError) || err.code !== 'rate_limited') throw err;
      const seconds = Number(err.headers['Retry-After'] ?? TEST_INTERVAL_MS / 1000);
      const testResult = {
        webhookId: wid,
        tooSoon:
          `A webhook can be tested once every ${TEST_INTERVAL_MS / 1000} seconds, and this one was tested less than ` +
          `${TEST_INTERVAL_MS / 1000} seconds ago. Wait ${seconds} second${seconds === 1 ? '' : 's'}, then send the test again.`,
      };
      return this.renderList(res, ctx, viewer, conn, { testResult }, 429);
    }
  }

  @Get(':wid/remove')
  async confirmRemove(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    const hook = await this.webhooks.get(conn.id, wid);
    if (!viewer.moduleOn) return redirectTo(res, `/console/connections/${conn.id}/webhooks`);
    this.views.render(res, ctx, 'confirm', {
      title: 'Remove this webhook?',
      crumbs: webhookCrumbs(conn),
      danger: true,
      explanation: [
        `Nothing more is sent to ${hook.url}, and its deliveries still waiting for an attempt are given up. This cannot be undone: its signing secret is wiped.`,
        'Its delivery log stays readable until the retention sweep removes it.',
      ],
      action: `/console/connections/${conn.id}/webhooks/${hook.id}/remove`,
      button: 'Remove the webhook',
      cancel: `/console/connections/${conn.id}/webhooks`,
    });
  }

  @Post(':wid/remove')
  async remove(
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    await this.webhooks.remove(conn.id, wid);
    return redirectTo(res, `/console/connections/${conn.id}/webhooks?done=removed`);
  }

  /** The connection, if webhooks can be added to it and tested (it is not revoked). */
  private async changeable(viewer: ConsoleViewer, id: string): Promise<ConnectionEntity> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    if (conn.revokedAt) throw new DomainError('validation_failed', 'This connection is revoked: its webhooks are stopped and none can be added or tested.');
    return conn;
  }

  /** The outcome of a test call, read back from the delivery log (the test is logged like any delivery). */
  private async testResult(viewer: ConsoleViewer, conn: ConnectionEntity, deliveryId: string) {
    try {
      const { delivery, attempts } = await this.log.get(deliveryId, viewer.organisationId);
      if (!delivery.isTest || delivery.connectionId !== conn.id) return null;
      const attempt = attempts[attempts.length - 1];
      return {
        webhookId: delivery.webhookId,
        delivered: delivery.state === 'delivered',
        status: attempt?.status ?? null,
        durationMs: attempt?.durationMs ?? null,
        error: attempt ? attempt.error : (delivery.giveUpReason ?? 'not attempted'),
        at: attempt?.attemptedAt ?? delivery.createdAt,
      };
    } catch (err) {
      if (err instanceof DomainError && err.code === 'not_found') return null;
      throw err;
    }
  }

  private async renderList(
    res: Response,
    ctx: ConsoleContext,
    viewer: ConsoleViewer,
    conn: ConnectionEntity,
    extra: Record<string, unknown>,
    status = 200,
  ): Promise<void> {
    const { items: webhooks } = await this.webhooks.list(conn.id, { limit: MAX_WEBHOOKS_PER_CONNECTION });
    const eventOptions = SUBSCRIBABLE_EVENTS.map((event) => ({
      event,
      line: EVENT_LINES[event] ?? '',
      scope: EVENT_SCOPES[event],
      allowed: conn.scopes.includes(EVENT_SCOPES[event]),
    }));
    this.views.render(
      res,
      ctx,
      view('webhooks'),
      {
        title: `Webhooks of ${conn.name}`,
        crumbs: [
          { href: '/console', label: 'Connections' },
          { href: `/console/connections/${conn.id}`, label: conn.name },
        ],
        conn,
        webhooks,
        canChange: viewer.moduleOn && !conn.revokedAt,
        full: webhooks.length >= MAX_WEBHOOKS_PER_CONNECTION,
        maxWebhooks: MAX_WEBHOOKS_PER_CONNECTION,
        eventOptions,
        values: { url: '', events: [] },
        problems: {},
        testIntervalSeconds: TEST_INTERVAL_MS / 1000,
        ...extra,
      },
      status,
    );
  }
}

export function webhookCrumbs(conn: ConnectionEntity) {
  return [
    { href: '/console', label: 'Connections' },
    { href: `/console/connections/${conn.id}`, label: conn.name },
    { href: `/console/connections/${conn.id}/webhooks`, label: 'Webhooks' },
  ];
}
