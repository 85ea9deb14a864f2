import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe } from '@web/http';
import type { Response } from 'express';
import { ScimWriter } from './scim-caller-of';
import { ScimContentTypeInterceptor } from './scim-content-type.interceptor';
import { ScimCaller } from '../model/scim-caller';
import { GROUP_RESOURCE } from '../model/scim-schemas';
import { projectionIncludes, projectResource } from '../model/scim-projection';
import { ScimGroupsService } from '../scim-groups.service';
import { ScimJson } from '../model/scim-patch';
import { listResponse, readListQuery, readProjection, readSearchRequest, ScimListQuery } from './scim-query';

type QueryParams = Record<string, unknown>;

/**
 * SCIM 2.0 Groups: the organisation's groups. Setting members also needs users:write (403
 * scope_missing without it); a group made here holds no permissions.
 */
@ApiExcludeController()
@Controller('scim/v2/Groups')
@UseInterceptors(ScimContentTypeInterceptor)
export class ScimGroupsController {
  constructor(private readonly groups: ScimGroupsService) {}

  @Get()
  @RequireScopes('groups:read')
  async list(@CurrentPrincipal() p: Principal, @Query() query: QueryParams): Promise<ScimJson> {
    return this.answerList(p, readListQuery(query));
  }

  /** RFC 7644 §3.4.3: the list's query in a SearchRequest body, answered as the GET is. */
  @Post('.search')
  @HttpCode(200)
  @RequireScopes('groups:read')
  async search(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<ScimJson> {
    return this.answerList(p, readSearchRequest(body));
  }

  private async answerList(p: Principal, q: ScimListQuery): Promise<ScimJson> {
    const list = await this.groups.list(p, q.filter, q.page, projectionIncludes(GROUP_RESOURCE, q.projection, 'members'));
    return listResponse(list, (r) => projectResource(r, GROUP_RESOURCE, q.projection));
  }

  @Post()
  @HttpCode(201)
  @RequireScopes('groups:write')
  async create(@ScimWriter() p: ScimCaller, @Body() body: unknown, @Query() query: QueryParams, @Res({ passthrough: true }) res: Response): Promise<ScimJson> {
    const group = await this.groups.create(p, body);
    res.setHeader('Location', (group.meta as { location: string }).location);
    return projectResource(group, GROUP_RESOURCE, readProjection(query));
  }

  @Get(':id')
  @RequireScopes('groups:read')
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Query() query: QueryParams): Promise<ScimJson> {
    const projection = readProjection(query);
    return projectResource(await this.groups.get(p, id, projectionIncludes(GROUP_RESOURCE, projection, 'members')), GROUP_RESOURCE, projection);
  }

  @Put(':id')
  @RequireScopes('groups:write')
  async replace(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string, @Body() body: unknown, @Query() query: QueryParams): Promise<ScimJson> {
    return projectResource(await this.groups.replace(p, id, body), GROUP_RESOURCE, readProjection(query));
  }

  @Patch(':id')
  @RequireScopes('groups:write')
  async patch(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string, @Body() body: unknown, @Query() query: QueryParams): Promise<ScimJson> {
    return projectResource(await this.groups.patch(p, id, body), GROUP_RESOURCE, readProjection(query));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('groups:write')
  async remove(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.groups.remove(p, id);
  }
}
