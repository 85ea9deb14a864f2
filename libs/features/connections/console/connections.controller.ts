import { Body, Controller, Get, Param, Post, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError, SCOPE_DESCRIPTIONS, SCOPES } from '@kernel/core';
import { DigitsIdPipe } from '@web/http';
import { ApiKeysService, KeyRefusal, MAX_LIVE_KEYS } from '../api-keys.service';
import { ConnectionEntity } from '../connection.entity';
import { ConnectionsService } from '../connections.service';
import {
  ConsoleContext,
  ConsoleExceptionFilter,
  ConsoleGuard,
  ConsoleReveals,
  ConsoleViewer,
  ConsoleViews,
  Ctx,
  featureViews,
  fieldError,
  formList,
  formText,
  noticeFor,
  redirectTo,
  Viewer,
} from '@web/console';
import type { Response } from 'express';

const view = featureViews(__dirname);

/** The scopes as the forms offer them: each with its one line. */
const SCOPE_OPTIONS = SCOPES.map((scope) => ({ scope, description: SCOPE_DESCRIPTIONS[scope] }));

const NOTICES: Record<string, string> = {
  created: 'The connection was made. Make a key for it below.',
  'key-revoked': 'The key was revoked: it is refused from its next call.',
  scopes: 'The scopes were saved: every key of the connection has them from its next call.',
  'connection-revoked': 'The connection was revoked: its keys are refused and its webhooks stopped.',
};

/**
 * The Integrations page (the organisation's connections) and a connection's page (its keys and
 * scopes). Every change goes through ConnectionsService and ApiKeysService, as the CLI's do.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console')
export class ConnectionsPageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly keys: ApiKeysService,
    private readonly views: ConsoleViews,
    private readonly reveals: ConsoleReveals,
  ) {}

  @Get()
  async list(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Query('done') done: unknown, @Res() res: Response): Promise<void> {
    const connections = await this.connections.listForOrganisation(viewer.organisationId);
    this.views.render(res, ctx, view('connections'), { title: 'Connections', connections, notice: noticeFor(NOTICES, done) });
  }

  @Get('connections/new')
  newConnection(@Ctx() ctx: ConsoleContext, @Res() res: Response): void {
    this.renderNew(res, ctx, { name: '', scopes: [] });
  }

  @Post('connections')
  async create(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Body() form: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const values = { name: formText(form, 'name', 200), scopes: formList(form, 'scopes') };
    let conn: ConnectionEntity;
    try {
      conn = await this.connections.create(viewer.organisationId, values.name, values.scopes);
    } catch (err) {
      const problem = fieldError(err, { name: 'name', scopes: 'scopes' });
      if (!problem) throw err;
      return this.renderNew(res, ctx, values, problem, 422);
    }
    return redirectTo(res, `/console/connections/${conn.id}?done=created`);
  }

  @Get('connections/:id')
  async show(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Query('done') done: unknown,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    await this.renderConnection(res, ctx, conn, { notice: noticeFor(NOTICES, done) });
  }

  @Post('connections/:id/keys')
  async makeKey(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Param('id', DigitsIdPipe) id: string, @Res() res: Response): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    let made: { id: string; key: string; lastFour: string };
    try {
      made = await this.keys.create(conn.id);
    } catch (err) {
      if (!(err instanceof KeyRefusal)) throw err;
      const keyError =
        err.reason === 'live_key_limit'
          ? `This connection already has ${MAX_LIVE_KEYS} live keys, the most it can hold. Revoke one first (for example the one your partner has replaced), then make the new one.`
          : 'This connection is revoked: it cannot hold new keys.';
      return this.renderConnection(res, ctx, conn, { keyError }, 422);
    }
    const location = await this.reveals.stash(ctx, viewer, {
      kind: 'key',
      connectionId: conn.id,
      connectionName: conn.name,
      key: made.key,
      lastFour: made.lastFour,
    });
    return redirectTo(res, location);
  }

  @Get('connections/:id/keys/:keyId/revoke')
  async confirmRevokeKey(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('keyId', DigitsIdPipe) keyId: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    const key = await this.ownKey(conn, keyId);
    // A key already revoked has nothing to confirm: back to its connection.
    if (key.state !== 'live') return redirectTo(res, `/console/connections/${conn.id}`);
    this.views.render(res, ctx, 'confirm', {
      title: `Revoke the key ending in ${key.last_four}?`,
      crumbs: this.crumbs(conn),
      danger: true,
      explanation: [
        `The key ending in ${key.last_four} of ${conn.name} is refused from its next call, on every replica of the API. This cannot be undone.`,
        'The connection’s other keys keep working, so a partner can move to a new key first and then revoke the old one.',
      ],
      action: `/console/connections/${conn.id}/keys/${key.id}/revoke`,
      button: 'Revoke the key',
      cancel: `/console/connections/${conn.id}`,
    });
  }

  @Post('connections/:id/keys/:keyId/revoke')
  async revokeKey(
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('keyId', DigitsIdPipe) keyId: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    const key = await this.ownKey(conn, keyId);
    await this.keys.revoke(key.id);
    return redirectTo(res, `/console/connections/${conn.id}?done=key-revoked`);
  }

  @Post('connections/:id/scopes')
  async setScopes(
    @Ctx() ctx: ConsoleContext,
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Body() form: Record<string, unknown>,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    const scopes = formList(form, 'scopes');
    try {
      await this.connections.setScopes(conn.id, scopes);
    } catch (err) {
      const problem = fieldError(err, { scopes: 'scopes', connection: 'scopes' });
      if (!problem) throw err;
      return this.renderConnection(res, ctx, conn, { scopeError: problem.message, chosenScopes: scopes }, 422);
    }
    return redirectTo(res, `/console/connections/${conn.id}?done=scopes`);
  }

  @Get('connections/:id/revoke')
  async confirmRevoke(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Param('id', DigitsIdPipe) id: string, @Res() res: Response): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    this.views.render(res, ctx, 'confirm', {
      title: `Revoke ${conn.name}?`,
      crumbs: this.crumbs(conn),
      danger: true,
      explanation: [
        `Revoking is immediate and permanent: every key of ${conn.name} is refused from its next call, and it cannot be made live again.`,
        'Its webhooks stop: nothing more is delivered to them, and deliveries still waiting are given up.',
      ],
      action: `/console/connections/${conn.id}/revoke`,
      button: 'Revoke the connection',
      cancel: `/console/connections/${conn.id}`,
    });
  }

  @Post('connections/:id/revoke')
  async revoke(@Viewer() viewer: ConsoleViewer, @Param('id', DigitsIdPipe) id: string, @Res() res: Response): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    await this.connections.revoke(conn.id);
    return redirectTo(res, '/console?done=connection-revoked');
  }

  private renderNew(
    res: Response,
    ctx: ConsoleContext,
    values: { name: string; scopes: string[] },
    problem?: { field: string; message: string },
    status = 200,
  ): void {
    this.views.render(
      res,
      ctx,
      view('connection-new'),
      { title: 'Make a connection', crumbs: [{ href: '/console', label: 'Connections' }], values, problem, scopeOptions: SCOPE_OPTIONS },
      status,
    );
  }

  private async renderConnection(res: Response, ctx: ConsoleContext, conn: ConnectionEntity, extra: Record<string, unknown>, status = 200): Promise<void> {
    const keys = await this.keys.list(conn.id);
    const liveKeys = keys.filter((k) => k.state === 'live').length;
    this.views.render(
      res,
      ctx,
      view('connection'),
      {
        title: conn.name,
        crumbs: [{ href: '/console', label: 'Connections' }],
        conn,
        keys,
        liveKeys,
        maxLiveKeys: MAX_LIVE_KEYS,
        scopeOptions: SCOPE_OPTIONS,
        chosenScopes: conn.scopes,
        ...extra,
      },
      status,
    );
  }

  private crumbs(conn: ConnectionEntity) {
    return [
      { href: '/console', label: 'Connections' },
      { href: `/console/connections/${conn.id}`, label: conn.name },
    ];
  }

  /** A key of this connection (already checked to be the viewer's organisation's); 404 page otherwise. */
  private async ownKey(conn: ConnectionEntity, keyId: string) {
    const key = (await this.keys.list(conn.id)).find((k) => k.id === keyId);
    if (!key) throw new DomainError('not_found', 'There is no such key on this connection.');
    return key;
  }
}
