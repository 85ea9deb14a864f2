import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe, SyncPageQueryDto, SYNC_LIST_NOTE, syncPageRequest, ApiData, ApiErrors } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { CursorCodec, paginate } from '@kernel/database';
import { GroupsService } from '../groups.service';
import { GroupDto } from './dto/group.dto';
import { CreateGroupDto, UpdateGroupDto } from './dto/group-requests.dto';
import { presentGroup } from './group.presenter';
import { ApiGroupId } from './groups.api-docs';

@ApiTags('Groups')
@Controller('v1/groups')
export class GroupsController {
  constructor(
    private readonly groups: GroupsService,
    private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @RequireScopes('groups:read')
  @ApiOperation({
    operationId: 'listGroups',
    summary: 'List groups',
    description: `The organisation's groups, newest first. Scope \`groups:read\`.${SYNC_LIST_NOTE}`,
  })
  @ApiData(GroupDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() query: SyncPageQueryDto): Promise<{ data: GroupDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await paginate(this.groups.listQuery(p.organisationId), syncPageRequest(query), this.cursors);
    return { data: items.map(presentGroup), next_cursor: nextCursor };
  }

  @Post()
  @HttpCode(201)
  @Idempotent()
  @RequireScopes('groups:write')
  @ApiOperation({
    operationId: 'createGroup',
    summary: 'Create a group',
    description: 'A name unique in the organisation (ignoring case) and, optionally, permission codes. IK. Scope `groups:write`.',
  })
  @ApiData(GroupDto, { status: 201, description: 'Created.' })
  @ApiErrors('permission_not_grantable', 'idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused', 'unknown_permission')
  async create(@CurrentPrincipal() p: Principal, @Body() body: CreateGroupDto): Promise<{ data: GroupDto }> {
    return { data: presentGroup(await this.groups.create(p.organisationId, body)) };
  }

  @Get(':id')
  @RequireScopes('groups:read')
  @ApiGroupId()
  @ApiOperation({ operationId: 'getGroup', summary: 'Get a group', description: 'Scope `groups:read`. A group of another organisation answers 404.' })
  @ApiData(GroupDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<{ data: GroupDto }> {
    return { data: presentGroup(await this.groups.get(p.organisationId, id)) };
  }

  @Patch(':id')
  @RequireScopes('groups:write')
  @ApiGroupId()
  @ApiOperation({
    operationId: 'updateGroup',
    summary: 'Rename a group or replace its permissions',
    description:
      'Fields left out are kept; `permissions`, when given, replace the list. A change that would leave the organisation with no active ' +
      'person able to manage people answers 409 `last_people_manager` and changes nothing. Scope `groups:write`.',
  })
  @ApiData(GroupDto)
  @ApiErrors('permission_not_grantable', 'last_people_manager', 'validation_failed', 'unknown_permission')
  async update(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: UpdateGroupDto): Promise<{ data: GroupDto }> {
    return { data: presentGroup(await this.groups.update(p.organisationId, id, body)) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('groups:write')
  @ApiGroupId()
  @ApiOperation({
    operationId: 'deleteGroup',
    summary: 'Delete a group',
    description:
      'Members keep their accounts and stay in the organisation, without a group (their `group_id` becomes null). A group that holds ' +
      'cases answers 409 `group_holds_cases`; one whose removal would leave no active person able to manage people, or no active owner ' +
      '(`organisation.own`) where there was one, answers 409 `last_people_manager`. Scope `groups:write`.',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors('group_holds_cases', 'last_people_manager')
  async delete(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.groups.delete(p.organisationId, id);
  }
}
