import { Controller, Get, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { ConnectionsService, ConsoleViewer } from '@app/domain';
import type { Response } from 'express';
import { ConsoleContext, Ctx, Viewer } from './console-context';
import { ConsoleExceptionFilter } from './console-exception.filter';
import { ConsoleGuard } from './console.guard';
import { ConsoleViews } from './console-views';

/** The Integrations page: the organisation's connections. */
@Public()
@ApiExcludeController()
@UseGuards(ConsoleGuard)
@UseFilters(ConsoleExceptionFilter)
@Controller('console')
export class ConnectionsPageController {
  constructor(
    private readonly connections: ConnectionsService,
    private readonly views: ConsoleViews,
  ) {}

  @Get()
  async list(@Ctx() ctx: ConsoleContext, @Viewer() viewer: ConsoleViewer, @Res() res: Response): Promise<void> {
    const connections = await this.connections.listForOrganisation(viewer.organisationId);
    this.views.render(res, ctx, 'connections', { title: 'Connections', connections });
  }
}
