import { Body, Controller, Get, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError, notFound } from '@kernel/core';
import { DigitsIdPipe } from '@web/http';
import { ConnectionEntity, ConnectionsService } from '@features/connections';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  formText,
  noticeFor,
  redirectTo,
  Viewer,
} from '@web/console';
import { DELIVERY_STATES, DeliveryFilter, DeliveryLogService, LoggedDelivery, MAX_BULK_RESEND, sentBody } from '../delivery-log.service';
import { bodyText, headerValue, Headers } from '../model/exchange';
import { WebhookDeliveryAttemptEntity } from '../webhook-delivery-attempt.entity';
import { WebhookEntity } from '../webhook.entity';
import { WebhooksService } from '../webhooks.service';
import { EVENT_NAMES } from '@kernel/events';
import type { Response } from 'express';
import { parseSince, SINCE_EXAMPLE, sinceProblem, sinceText } from '@web/console';
import { webhookCrumbs } from './webhooks.controller';

const view = featureViews(__dirname);

/** Deliveries per page of the log. */
export const DELIVERIES_PAGE_SIZE = 25;

const NOTICES: Record<string, string> = {
  resent: 'The delivery was sent again: a new series of attempts has started under the same delivery id.',
  'tried-now': 'The delivery is being tried now: its next attempt was brought forward (it is not attempted twice).',
  'bulk-resent':
    'The deliveries are being sent now: each failed or given-up one has started a new series of attempts under its own delivery id, and each one waiting for a retry is tried now.',
  'bulk-none': 'There was nothing to send: no delivery made since that time failed, was given up or is waiting for a retry.',
};

/** Error classes as the page words them. */
const ERROR_CLASS_LABELS: Record<string, string> = {
  dns: 'name lookup failed',
  address_not_public: 'address not public',
  refused: 'connection refused',
  tls: 'TLS handshake failed',
  timeout: 'timed out',
  redirect: 'redirect (not followed)',
  status: 'error status',
  connection_lost: 'connection lost',
  other: 'other error',
};

const headerLines = (headers: Headers | null): string | null =>
  headers
    ? Object.entries(headers)
        .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`))
        .join('\n')
    : null;

const sizeText = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KiB`);

/** An attempt's exchange as the delivery page shows it: headers as lines, a body as text or as its size and type. */
export function exchangeView(a: WebhookDeliveryAttemptEntity) {
  const type = headerValue(a.responseHeaders, 'content-type');
  const body = a.responseBody;
  const text = body && body.length > 0 ? bodyText(body, type, a.responseBodyTruncated) : null;
  const size = a.responseBodySize ?? body?.length ?? null;
  let bodyNote: string | null = null;
  if (a.responseHeaders && (!body || body.length === 0)) bodyNote = 'The answer had no body.';
  else if (body && text === null)
    bodyNote = `Not text: ${size === null ? `more than ${sizeText(body.length)}` : sizeText(size)}, ${type ? `type ${type}` : 'no type given'}.`;
  else if (text !== null && a.responseBodyTruncated)
    bodyNote = `The first ${sizeText(body!.length)} of ${size === null ? 'a longer body' : sizeText(size)} are kept; the rest was not.`;
  return {
    requestHeaders: headerLines(a.requestHeaders),
    responseHeaders: headerLines(a.responseHeaders),
    bodyText: text,
    bodyNote,
    errorClass: a.errorClass ? (ERROR_CLASS_LABELS[a.errorClass] ?? a.errorClass) : null,
    kept: a.requestHeaders !== null || a.responseHeaders !== null || a.errorClass !== null,
  };
}

const STATE_LABELS: Record<string, string> = {
  queued: 'queued',
  waiting: 'waiting for a retry',
  delivered: 'delivered',
  failed: 'failed',
  given_up: 'given up',
};

/**
 * A webhook's deliveries (newest first, keyset-paginated, filtered by state and event), one
 * delivery with its attempts and their exchanges, resending one, trying a waiting one now, and
 * sending now every delivery since a time that failed, was given up or is waiting (bounded,
 * confirmed). All through DeliveryLogService, confined to the viewer's organisation.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/connections/:id/webhooks/:wid/deliveries')
export class DeliveriesPageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly webhooks: WebhooksService,
    private readonly log: DeliveryLogService,
    private readonly views: ConsoleViews,
  ) {}

  @Get()
  async list(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    await this.renderList(res, ctx, viewer, conn, hook, query);
  }

  /** The bulk send's confirmation: how many it will send now (at most MAX_BULK_RESEND). */
  @Get('resend-failed')
  async confirmBulk(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Query() query: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    const base = listPath(conn, hook);
    if (!canChange(viewer, conn)) return redirectTo(res, base);
    const given = formText(query, 'since', 40);
    const since = parseSince(given);
    if (!since) return this.renderList(res, ctx, viewer, conn, hook, {}, { since: given, sinceError: sinceProblem(given) }, 422);
    const count = await this.log.countRecoverable(hook.id, since, undefined, viewer.organisationId);
    const when = `${sinceText(since)} UTC`;
    if (count === 0) {
      return this.renderList(
        res,
        ctx,
        viewer,
        conn,
        hook,
        {},
        { since: given, notice: `No delivery made since ${when} failed, was given up or is waiting for a retry: there is nothing to send.` },
      );
    }
    const more = count > MAX_BULK_RESEND;
    const n = more ? MAX_BULK_RESEND : count;
    const deliveries = `deliver${n === 1 ? 'y' : 'ies'}`;
    this.views.render(res, ctx, 'confirm', {
      title: more ? `Send the oldest ${MAX_BULK_RESEND} deliveries now?` : `Send ${count} ${deliveries} now?`,
      crumbs: deliveryCrumbs(conn, hook),
      explanation: [
        more
          ? `More than ${MAX_BULK_RESEND} deliveries to ${hook.url} made since ${when} failed, were given up or are waiting for a retry. One request sends at most ${MAX_BULK_RESEND}: this sends the oldest ${MAX_BULK_RESEND}; come back for the rest once they are under way.`
          : `This sends ${count} ${deliveries} to ${hook.url} made since ${when} that ${count === 1 ? 'failed, was given up or is' : 'failed, were given up or are'} waiting for a retry.`,
        'A failed or given-up delivery starts a new series of attempts under its own delivery id, so the receiver can still discard one it already processed. A delivery waiting for a retry is tried now instead of at its scheduled time (never twice). Test deliveries are never resent.',
      ],
      action: `${base}/resend-failed`,
      fields: { since: sinceText(since) },
      button: `Send ${n} ${deliveries} now`,
      cancel: base,
    });
  }

  @Post('resend-failed')
  async bulk(
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Body() form: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    refuseRevoked(conn);
    const since = parseSince(formText(form, 'since', 40));
    if (!since) throw new DomainError('validation_failed', 'The time to send from is missing or not a time; open the Deliveries page and choose it again.');
    const { resent, triedNow } = await this.log.recover(hook.id, since, undefined, viewer.organisationId);
    return redirectTo(res, `${listPath(conn, hook)}?done=${resent + triedNow > 0 ? 'bulk-resent' : 'bulk-none'}`);
  }

  @Get(':did')
  async show(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Param('did') did: string,
    @Query('done') done: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    const logged = await this.delivery(viewer, hook, did);
    const series = [...new Set(logged.attempts.map((a) => a.series))].sort((a, b) => b - a);
    this.views.render(res, ctx, view('delivery'), {
      title: `Delivery ${logged.delivery.id}`,
      crumbs: deliveryCrumbs(conn, hook),
      conn,
      hook,
      logged,
      series: series.map((n) => ({ n, attempts: logged.attempts.filter((a) => a.series === n).map((a) => ({ a, x: exchangeView(a) })) })),
      sentBody: sentBody(logged.delivery),
      stateLabels: STATE_LABELS,
      canResend: canChange(viewer, conn) && resendable(logged),
      canTryNow: canChange(viewer, conn) && !logged.delivery.isTest && logged.delivery.state === 'waiting',
      base: listPath(conn, hook),
      notice: noticeFor(NOTICES, done),
    });
  }

  @Get(':did/resend')
  async confirmResend(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Param('did') did: string,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    const logged = await this.delivery(viewer, hook, did, false);
    const path = `${listPath(conn, hook)}/${logged.delivery.id}`;
    if (!canChange(viewer, conn) || !resendable(logged)) return redirectTo(res, path);
    this.views.render(res, ctx, 'confirm', {
      title: 'Resend this delivery?',
      crumbs: [...deliveryCrumbs(conn, hook), { href: path, label: `Delivery ${logged.delivery.id.slice(0, 8)}…` }],
      explanation: [
        `The ${logged.delivery.event} delivery ${logged.delivery.id} is sent to ${hook.url} again: series ${logged.delivery.series + 1} starts now, on the usual retry timetable.`,
        'It keeps its delivery id, so the receiver can discard it if it already processed it.',
      ],
      action: `${path}/resend`,
      button: 'Resend the delivery',
      cancel: path,
    });
  }

  @Post(':did/resend')
  async resend(
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Param('did') did: string,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    refuseRevoked(conn);
    const logged = await this.delivery(viewer, hook, did, false);
    await this.log.resend(logged.delivery.id, viewer.organisationId);
    return redirectTo(res, `${listPath(conn, hook)}/${logged.delivery.id}?done=resent`);
  }

  /** A delivery waiting for a retry is tried now: its scheduled attempt is brought forward, not doubled. */
  @Post(':did/try-now')
  async tryNow(
    @Viewer() viewer: ConsoleViewer,
    @Param('id') id: string,
    @Param('wid') wid: string,
    @Param('did') did: string,
    @Res() res: Response,
  ): Promise<void> {
    const { conn, hook } = await this.find(viewer, id, wid);
    refuseRevoked(conn);
    const logged = await this.delivery(viewer, hook, did, false);
    await this.log.tryNow(logged.delivery.id, viewer.organisationId);
    return redirectTo(res, `${listPath(conn, hook)}/${logged.delivery.id}?done=tried-now`);
  }

  /** The webhook and its connection in one query; when that finds nothing, the two lookups one by one say which is missing. */
  private async find(viewer: ConsoleViewer, id: string, wid: string): Promise<{ conn: ConnectionEntity; hook: WebhookEntity }> {
    const found = await this.webhooks.findWithConnection(viewer.organisationId, id, wid);
    if (found) return found;
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    return { conn, hook: await this.webhooks.get(conn.id, wid) };
  }

  private async delivery(viewer: ConsoleViewer, hook: WebhookEntity, did: string, exchange = true): Promise<LoggedDelivery> {
    const logged = await this.log.get(did, viewer.organisationId, exchange);
    if (logged.delivery.webhookId !== hook.id) throw notFound('delivery');
    return logged;
  }

  private async renderList(
    res: Response,
    ctx: ConsoleContext,
    viewer: ConsoleViewer,
    conn: ConnectionEntity,
    hook: WebhookEntity,
    query: Record<string, unknown>,
    bulk: { since?: string; sinceError?: string; notice?: string } = {},
    status = 200,
  ): Promise<void> {
    const state = formText(query, 'state', 20);
    const event = formText(query, 'event', 100);
    const filter: DeliveryFilter = {};
    if ((DELIVERY_STATES as string[]).includes(state)) filter.state = state;
    if ((EVENT_NAMES as string[]).includes(event)) filter.event = event;
    // A cursor given empty (or twice) is refused like a forged one, as the REST lists refuse it.
    const cursor = query.cursor === undefined ? undefined : formText(query, 'cursor', 500);
    const page = await this.log.list(hook.id, { limit: DELIVERIES_PAGE_SIZE, cursor }, viewer.organisationId, filter);
    const base = listPath(conn, hook);
    const keep = new URLSearchParams();
    if (filter.state) keep.set('state', filter.state);
    if (filter.event) keep.set('event', filter.event);
    const older = page.nextCursor ? `${base}?${new URLSearchParams([...keep, ['cursor', page.nextCursor]]).toString()}` : null;
    const newest = cursor ? `${base}${keep.size ? `?${keep.toString()}` : ''}` : null;
    this.views.render(
      res,
      ctx,
      view('deliveries'),
      {
        title: `Deliveries to ${hook.url}`,
        crumbs: webhookCrumbs(conn),
        conn,
        hook,
        deliveries: page.items,
        filter,
        states: DELIVERY_STATES.map((s) => ({ value: s, label: STATE_LABELS[s] })),
        events: EVENT_NAMES,
        stateLabels: STATE_LABELS,
        older,
        newest,
        base,
        canChange: canChange(viewer, conn),
        maxBulk: MAX_BULK_RESEND,
        since: bulk.since ?? sinceText(new Date(Date.now() - 24 * 3600_000)),
        sinceExample: SINCE_EXAMPLE,
        sinceError: bulk.sinceError,
        notice: bulk.notice ?? noticeFor(NOTICES, query.done),
      },
      status,
    );
  }
}

const canChange = (viewer: ConsoleViewer, conn: ConnectionEntity) => viewer.moduleOn && !conn.revokedAt;

/** A revoked connection's deliveries would only be given up again: nothing is resent for it. */
function refuseRevoked(conn: ConnectionEntity): void {
  if (conn.revokedAt) throw new DomainError('validation_failed', 'This connection is revoked: its webhooks are stopped and nothing is resent to them.');
}

/** What DeliveryLogService.resend takes: a finished delivery that is not a test. */
const resendable = ({ delivery: d }: LoggedDelivery) => !d.isTest && ['delivered', 'failed', 'given_up'].includes(d.state);

const listPath = (conn: ConnectionEntity, hook: WebhookEntity) => `/console/connections/${conn.id}/webhooks/${hook.id}/deliveries`;

const deliveryCrumbs = (conn: ConnectionEntity, hook: WebhookEntity) => [
  ...webhookCrumbs(conn),
  { href: listPath(conn, hook), label: `Deliveries to ${hook.url}` },
];
