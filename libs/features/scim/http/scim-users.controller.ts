import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Query, Res, UseInterceptors } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe } from '@web/http';
import type { Response } from 'express';
import { ScimWriter } from './scim-caller-of';
import { ScimContentTypeInterceptor } from './scim-content-type.interceptor';
import { ScimCaller } from '../model/scim-caller';
import { ScimJson } from '../model/scim-patch';
import { projectResource } from '../model/scim-projection';
import { ScimUsersService } from '../scim-users.service';
import { USER_RESOURCE } from '../model/scim-schemas';
import { listResponse, readListQuery, readProjection, readSearchRequest, ScimListQuery } from './scim-query';

type QueryParams = Record<string, unknown>;

/** SCIM 2.0 Users (RFC 7644 §3): people and invitations of the caller's organisation. */
@ApiExcludeController()
@Controller('scim/v2/Users')
@UseInterceptors(ScimContentTypeInterceptor)
export class ScimUsersController {
  constructor(private readonly users: ScimUsersService) {}

  @Get()
  @RequireScopes('users:read')
  async list(@CurrentPrincipal() p: Principal, @Query() query: QueryParams): Promise<ScimJson> {
    return this.answerList(p, readListQuery(query));
  }

  /** RFC 7644 §3.4.3: the list's query in a SearchRequest body, answered as the GET is. */
  @Post('.search')
  @HttpCode(200)
  @RequireScopes('users:read')
  async search(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<ScimJson> {
    return this.answerList(p, readSearchRequest(body));
  }

  private async answerList(p: Principal, q: ScimListQuery): Promise<ScimJson> {
    return listResponse(await this.users.list(p, q.filter, q.page), (r) => projectResource(r, USER_RESOURCE, q.projection));
  }

  @Post()
  @HttpCode(201)
  @RequireScopes('users:write')
  async create(@ScimWriter() p: ScimCaller, @Body() body: unknown, @Query() query: QueryParams, @Res({ passthrough: true }) res: Response): Promise<ScimJson> {
    const user = await this.users.create(p, body);
    res.setHeader('Location', (user.meta as { location: string }).location);
    return projectResource(user, USER_RESOURCE, readProjection(query));
  }

  @Get(':id')
  @RequireScopes('users:read')
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Query() query: QueryParams): Promise<ScimJson> {
    return projectResource(await this.users.get(p, id), USER_RESOURCE, readProjection(query));
  }

  @Put(':id')
  @RequireScopes('users:write')
  async replace(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string, @Body() body: unknown, @Query() query: QueryParams): Promise<ScimJson> {
    return projectResource(await this.users.replace(p, id, body), USER_RESOURCE, readProjection(query));
  }

  @Patch(':id')
  @RequireScopes('users:write')
  async patch(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string, @Body() body: unknown, @Query() query: QueryParams): Promise<ScimJson> {
    return projectResource(await this.users.patch(p, id, body), USER_RESOURCE, readProjection(query));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('users:write')
  async remove(@ScimWriter() p: ScimCaller, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.users.remove(p, id);
  }
}
