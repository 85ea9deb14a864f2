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
import { DELIVERY_STATES, DeliveryFilter, DeliveryLogService, LoggedDelivery, MAX_BULK_RESEND } from '../delivery-log.service';
import { WebhookEntity } from '../webhook.entity';
import { WebhooksService } from '../webhooks.service';
import { EVENT_NAMES } from '@kernel/events';
import type { Response } from 'express';
import { webhookCrumbs } from './webhooks.controller';

const view = featureViews(__dirname);

/** Deliveries per page of the log. */
export const DELIVERIES_PAGE_SIZE = 25;

const NOTICES: Record<string, string> = {
  resent: 'The delivery was sent again: a new series of attempts has started under the same delivery id.',
  'bulk-resent': 'The failed and given-up deliveries were sent again: each has started a new series of attempts under its own delivery id.',
  'bulk-none': 'There was nothing to resend: no failed or given-up delivery was made since that time.',
};

const STATE_LABELS: Record<string, string> = {
  queued: 'queued',
  waiting: 'waiting for a retry',
  delivered: 'delivered',
  failed: 'failed',
  given_up: 'given up',
};

/**
 * A `datetime-local` value (read as UTC: the page says so), or null when it is not one: every
 * field in its range (no 25:00, no 31 February), the year from 0001 on, so that whatever it
 * answers is a real time Postgres can compare with a timestamptz column.
 */
export function parseSince(value: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [+m[1], +m[2], +m[3], +m[4], +m[5], m[6] ? +m[6] : 0];
  if (year < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0–99 as 1900–1999.
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day ? null : d;
}

/** A time as a `datetime-local` value in UTC. */
const sinceValue = (d: Date) => d.toISOString().slice(0, 16);

/**
 * A webhook's deliveries (newest first, keyset-paginated, filtered by state and event), one
 * delivery's attempts, resending one, and resending every failed or given-up delivery since a
 * time (bounded, confirmed). All through DeliveryLogService, confined to the viewer's organisation.
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

  /** The bulk resend's confirmation: how many it will resend (at most MAX_BULK_RESEND). */
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
    const count = await this.log.countResendable(hook.id, since, viewer.organisationId);
    const when = `${sinceValue(since).replace('T', ' ')} UTC`;
    if (count === 0) {
      return this.renderList(
        res,
        ctx,
        viewer,
        conn,
        hook,
        {},
        { since: given, notice: `No failed or given-up delivery was made since ${when}: there is nothing to resend.` },
      );
    }
    const more = count > MAX_BULK_RESEND;
    this.views.render(res, ctx, 'confirm', {
      title: more
        ? `Resend the oldest ${MAX_BULK_RESEND} failed or given-up deliveries?`
        : `Resend ${count} failed or given-up deliver${count === 1 ? 'y' : 'ies'}?`,
      crumbs: deliveryCrumbs(conn, hook),
      explanation: [
        more
          ? `More than ${MAX_BULK_RESEND} deliveries to ${hook.url} made since ${when} failed or were given up. One request resends at most ${MAX_BULK_RESEND}: this resends the oldest ${MAX_BULK_RESEND}; come back for the rest once they are under way.`
          : `This resends ${count} deliver${count === 1 ? 'y' : 'ies'} to ${hook.url} made since ${when} that failed or were given up.`,
        'Each starts a new series of attempts under its own delivery id, so the receiver can still discard one it already processed. Test deliveries are never resent.',
      ],
      action: `${base}/resend-failed`,
      fields: { since: sinceValue(since) },
      button: more ? `Resend ${MAX_BULK_RESEND} deliveries` : `Resend ${count} deliver${count === 1 ? 'y' : 'ies'}`,
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
    if (!since) throw new DomainError('validation_failed', 'The time to resend from is missing or not a time; open the Deliveries page and choose it again.');
    const resent = await this.log.resendFailedSince(hook.id, since, viewer.organisationId);
    return redirectTo(res, `${listPath(conn, hook)}?done=${resent > 0 ? 'bulk-resent' : 'bulk-none'}`);
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
      series: series.map((n) => ({ n, attempts: logged.attempts.filter((a) => a.series === n) })),
      stateLabels: STATE_LABELS,
      canResend: canChange(viewer, conn) && resendable(logged),
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
    const logged = await this.delivery(viewer, hook, did);
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
    const logged = await this.delivery(viewer, hook, did);
    await this.log.resend(logged.delivery.id, viewer.organisationId);
    return redirectTo(res, `${listPath(conn, hook)}/${logged.delivery.id}?done=resent`);
  }

  /** The webhook and its connection in one query; when that finds nothing, the two lookups one by one say which is missing. */
  private async find(viewer: ConsoleViewer, id: string, wid: string): Promise<{ conn: ConnectionEntity; hook: WebhookEntity }> {
    const found = await this.webhooks.findWithConnection(viewer.organisationId, id, wid);
    if (found) return found;
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    return { conn, hook: await this.webhooks.get(conn.id, wid) };
  }

  private async delivery(viewer: ConsoleViewer, hook: WebhookEntity, did: string): Promise<LoggedDelivery> {
    const logged = await this.log.get(did, viewer.organisationId);
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
        since: bulk.since ?? sinceValue(new Date(Date.now() - 24 * 3600_000)),
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

const sinceProblem = (given: string) =>
  given.trim() === '' ? 'Enter the time to resend from, in UTC.' : 'Enter the time to resend from as a date and time in UTC, for example 2026-01-31 08:00.';
