import { Body, Controller, Get, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { TransactionHost } from '@kernel/database';
import { ApiKeysService, ConnectionsService } from '@features/connections';
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
  formText,
  redirectTo,
  Viewer,
} from '@web/console';
import type { Response } from 'express';
import { canProvision, IDENTITY_PROVIDERS, IdentityProvider, isIdentityProvider, SCIM_SCOPES, scimBaseUrl } from './scim-setup';

const view = featureViews(__dirname);

interface SetupValues {
  provider: string;
  name: string;
}

/**
 * The SCIM page: this installation's SCIM base URL, "Set up provisioning" (a connection holding
 * exactly the four SCIM scopes and its first key, shown once by the kit's reveal), the
 * connections that can already provision, and the identity providers' settings step by step.
 * Connections and keys are made by ConnectionsService and ApiKeysService, as on the connection pages.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/scim')
export class ScimSetupPageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly keys: ApiKeysService,
    private readonly tx: TransactionHost,
    private readonly views: ConsoleViews,
    private readonly reveals: ConsoleReveals,
  ) {}

  @Get()
  async show(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Res() res: Response): Promise<void> {
    await this.render(res, ctx, viewer, { provider: '', name: '' });
  }

  @Post('setup')
  async setUp(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Body() form: Record<string, unknown>, @Res() res: Response): Promise<void> {
    const values: SetupValues = { provider: formText(form, 'provider', 20), name: formText(form, 'name', 200) };
    if (!isIdentityProvider(values.provider)) {
      return this.render(res, ctx, viewer, values, { field: 'provider', message: 'Choose the identity provider you are setting up.' }, 422);
    }
    const provider: IdentityProvider = values.provider;
    const name = values.name.trim() || IDENTITY_PROVIDERS[provider].defaultName;
    let made: { connectionId: string; connectionName: string; key: string; lastFour: string };
    try {
      // One transaction: a connection is never left behind without the key the page promised.
      made = await this.tx.run(async () => {
        const conn = await this.connections.create(viewer.organisationId, name, [...SCIM_SCOPES]);
        const key = await this.keys.create(conn.id);
        return { connectionId: conn.id, connectionName: conn.name, key: key.key, lastFour: key.lastFour };
      });
    } catch (err) {
      const problem = fieldError(err, { name: 'name' });
      if (!problem) throw err;
      return this.render(res, ctx, viewer, values, problem, 422);
    }
    const baseUrl = scimBaseUrl(this.views.publicBaseUrl);
    const location = await this.reveals.stash(ctx, viewer, {
      kind: 'key',
      ...made,
      purpose: {
        title: `The key for ${made.connectionName}`,
        crumbs: [{ href: '/console/scim', label: 'SCIM provisioning' }],
        facts: [{ label: 'SCIM base URL', value: baseUrl }],
        instruction:
          provider === 'okta'
            ? 'In Okta, paste it as the Authorization Bearer token (Provisioning › Integration, authentication mode HTTP Header).'
            : provider === 'entra'
              ? 'In Microsoft Entra ID, paste it as the Secret Token (Provisioning › Admin Credentials).'
              : 'Your SCIM client sends it as a bearer token: Authorization: Bearer followed by the key.',
        tryPath: '/scim/v2/Users?count=1',
        trySays: 'This call answers with your organisation’s first user, as your identity provider will read it:',
        back: {
          href: `/console/scim${IDENTITY_PROVIDERS[provider].steps}`,
          label: `I have copied it: back to the ${IDENTITY_PROVIDERS[provider].label} steps`,
        },
      },
    });
    return redirectTo(res, location);
  }

  private async render(
    res: Response,
    ctx: ConsoleContext,
    viewer: ConsoleViewer,
    values: SetupValues,
    problem?: { field: string; message: string },
    status = 200,
  ): Promise<void> {
    const provisioning = (await this.connections.listForOrganisation(viewer.organisationId)).filter((c) => canProvision(c.scopes));
    this.views.render(
      res,
      ctx,
      view('scim-setup'),
      {
        title: 'SCIM provisioning',
        baseUrl: scimBaseUrl(this.views.publicBaseUrl),
        scopes: SCIM_SCOPES,
        providers: Object.entries(IDENTITY_PROVIDERS).map(([value, p]) => ({ value, label: p.label, defaultName: p.defaultName })),
        provisioning,
        allowList: viewer.ipAllowlist.length > 0,
        values,
        problem,
      },
      status,
    );
  }
}
