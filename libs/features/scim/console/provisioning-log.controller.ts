import { Controller, Get, Param, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { isId } from '@kernel/core';
import { DigitsIdPipe } from '@web/http';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  formText,
  parseSince,
  SINCE_EXAMPLE,
  sinceText,
  Viewer,
} from '@web/console';
import type { Response } from 'express';
import { PROVISIONING_OUTCOMES, PROVISIONING_RESOURCE_TYPES, ProvisioningChanges } from '../model/provisioning-event';
import { ProvisioningEvent, ProvisioningFilter, ProvisioningLogService } from '../provisioning-log.service';

const view = featureViews(__dirname);

/** Events per page of the log. */
export const PROVISIONING_PAGE_SIZE = 25;
export const LOG_PATH = '/console/scim/log';

const OUTCOME_LABELS: Record<string, string> = { succeeded: 'succeeded', refused: 'refused' };
const RESOURCE_LABELS: Record<string, string> = { User: 'Users', Group: 'Groups', other: 'Other SCIM paths' };
const OPERATION_LABELS: Record<string, string> = {
  create: 'Create',
  replace: 'Replace (PUT)',
  update: 'Update (PATCH)',
  delete: 'Delete',
  read: 'Read',
  search: 'Search',
};
const PROVIDER_LABELS: Record<string, string> = { okta: 'Okta', entra: 'Microsoft Entra ID', other: 'Other client' };

/** A change in a line: how many attributes changed, members added and removed. */
export function changeSummary(c: ProvisioningChanges | null): string {
  if (!c) return '';
  const parts: string[] = [];
  if (c.attributes_total > 0) parts.push(`${c.attributes_total} attribute${c.attributes_total === 1 ? '' : 's'} changed`);
  if (c.members?.added_total) parts.push(`${c.members.added_total} member${c.members.added_total === 1 ? '' : 's'} added`);
  if (c.members?.removed_total) parts.push(`${c.members.removed_total} member${c.members.removed_total === 1 ? '' : 's'} removed`);
  return parts.length > 0 ? parts.join(', ') : 'nothing changed';
}

/** An old or new value as the page prints it. */
const valueText = (v: unknown): string => (v === null || v === undefined ? '—' : typeof v === 'string' ? v : JSON.stringify(v));

/** A time as a `datetime-local` value in UTC. */

/**
 * The provisioning log in the Integrations section: the organisation's SCIM changes and refusals,
 * newest first, keyset-paginated, filtered by outcome, resource, connection and a time range
 * (UTC, as the page says); each event on its own page with what changed. Read-only, so it stays
 * readable while integrations are off. Through ProvisioningLogService, confined to the viewer's
 * organisation.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/scim/log')
export class ProvisioningLogPageController {
  constructor(
    private readonly log: ProvisioningLogService,
    private readonly views: ConsoleViews,
  ) {}

  @Get()
  async list(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const outcome = formText(query, 'outcome', 20);
    const resource = formText(query, 'resource_type', 20);
    const connection = formText(query, 'connection', 20);
    const sinceGiven = formText(query, 'since', 40);
    const untilGiven = formText(query, 'until', 40);
    const filter: ProvisioningFilter = {};
    if ((PROVISIONING_OUTCOMES as readonly string[]).includes(outcome)) filter.outcome = outcome;
    if ((PROVISIONING_RESOURCE_TYPES as readonly string[]).includes(resource)) filter.resourceType = resource;
    if (isId(connection)) filter.connectionId = connection;
    const errors: Record<string, string> = {};
    if (sinceGiven.trim() !== '') {
      const d = parseSince(sinceGiven);
      if (d) filter.since = d;
      else errors.since = `Enter the start as a date and time in UTC, in the form ${SINCE_EXAMPLE}.`;
    }
    if (untilGiven.trim() !== '') {
      const d = parseSince(untilGiven);
      if (d) filter.until = d;
      else errors.until = `Enter the end as a date and time in UTC, in the form ${SINCE_EXAMPLE}.`;
    }
    if (filter.since && filter.until && filter.until.getTime() <= filter.since.getTime()) {
      errors.until = 'The end must be later than the start.';
      delete filter.until;
    }
    // A cursor given empty (or twice) is refused like a forged one, as the REST lists refuse it.
    const cursor = query.cursor === undefined ? undefined : formText(query, 'cursor', 500);
    const page = await this.log.list(viewer.organisationId, { limit: PROVISIONING_PAGE_SIZE, cursor }, filter);
    const keep = new URLSearchParams();
    if (filter.outcome) keep.set('outcome', filter.outcome);
    if (filter.resourceType) keep.set('resource_type', filter.resourceType);
    if (filter.connectionId) keep.set('connection', filter.connectionId);
    if (filter.since) keep.set('since', sinceText(filter.since));
    if (filter.until) keep.set('until', sinceText(filter.until));
    const older = page.nextCursor ? `${LOG_PATH}?${new URLSearchParams([...keep, ['cursor', page.nextCursor]]).toString()}` : null;
    const newest = cursor ? `${LOG_PATH}${keep.size ? `?${keep.toString()}` : ''}` : null;
    const filtered = keep.size > 0;
    this.views.render(
      res,
      ctx,
      view('provisioning-log'),
      {
        title: 'Provisioning log',
        crumbs: [],
        events: page.items.map((e) => this.row(e)),
        filter,
        example: SINCE_EXAMPLE,
        form: { since: filter.since ? sinceText(filter.since) : sinceGiven, until: filter.until ? sinceText(filter.until) : untilGiven },
        errors,
        connectionName: filter.connectionId ? (page.items[0]?.connectionName ?? null) : null,
        outcomes: PROVISIONING_OUTCOMES.map((o) => ({ value: o, label: OUTCOME_LABELS[o] })),
        resources: PROVISIONING_RESOURCE_TYPES.map((r) => ({ value: r, label: RESOURCE_LABELS[r] })),
        filtered,
        older,
        newest,
        base: LOG_PATH,
      },
      Object.keys(errors).length > 0 ? 422 : 200,
    );
  }

  @Get(':eid')
  async show(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Param('eid', DigitsIdPipe) eid: string, @Res() res: Response): Promise<void> {
    const e = await this.log.get(viewer.organisationId, eid);
    const r = this.row(e);
    this.views.render(res, ctx, view('provisioning-event'), {
      title: `${r.operation} ${e.resourceType === 'other' ? 'on another SCIM path' : `${e.resourceType}${e.resourceId ? ` ${e.resourceId}` : ''}`}: ${e.outcome}`,
      crumbs: [{ href: LOG_PATH, label: 'Provisioning log' }],
      e,
      r,
      attributes: (e.changes?.attributes ?? []).map((a) => ({ attribute: a.attribute, old: valueText(a.old), new: valueText(a.new) })),
      members: e.changes?.members ?? null,
      base: LOG_PATH,
    });
  }

  private row(e: ProvisioningEvent) {
    return {
      id: e.id,
      at: e.occurredAt,
      connection: e.connectionName,
      connectionId: e.connectionId,
      provider: PROVIDER_LABELS[e.identityProvider] ?? e.identityProvider,
      operation: OPERATION_LABELS[e.operation] ?? e.operation,
      resource: e.resourceType === 'other' ? 'other SCIM path' : e.resourceType,
      resourceId: e.resourceId,
      outcome: e.outcome,
      status: e.status,
      scimType: e.scimType,
      summary: e.outcome === 'refused' ? (e.detail ?? '') : changeSummary(e.changes),
    };
  }
}
