import { Controller, Param, Post, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@web/auth';
import { DomainError } from '@kernel/core';
import { ConnectionsService } from '@features/connections';
import { ConsoleExceptionFilter, ConsoleGuard, ConsoleViewer, redirectTo, Viewer } from '@web/console';
import { DigitsIdPipe } from '@web/http';
import type { Response } from 'express';
import { WebhookEnableService } from '../webhook-enable.service';

/**
 * The "Switch back on" button of a switched-off webhook on the Webhooks page: the same service as
 * `POST /v1/webhooks/{id}/enable` (without a recovery time: the deliveries page's outage form sends
 * the given-up deliveries again), confined to the viewer's organisation.
 */
@Public({ throttle: false })
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console/connections/:id/webhooks')
export class WebhookEnablePageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly enabling: WebhookEnableService,
  ) {}

  @Post(':wid/enable')
  async enable(
    @Viewer() viewer: ConsoleViewer,
    @Param('id', DigitsIdPipe) id: string,
    @Param('wid', DigitsIdPipe) wid: string,
    @Res() res: Response,
  ): Promise<void> {
    const conn = await this.connections.getInOrganisation(viewer.organisationId, id);
    if (conn.revokedAt) throw new DomainError('validation_failed', 'This connection is revoked: its webhooks are stopped and none can be switched back on.');
    await this.enabling.enable(conn.id, conn.organisationId, wid);
    return redirectTo(res, `/console/connections/${conn.id}/webhooks?done=enabled`);
  }
}
