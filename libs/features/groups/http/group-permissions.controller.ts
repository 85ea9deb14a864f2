import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe, ApiErrors } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { GroupsService } from '../groups.service';
import { PermissionCodesDto } from './dto/group.dto';
import { AddPermissionDto, SetPermissionsDto } from './dto/group-requests.dto';
import { ApiGroupId } from './groups.api-docs';

const CODES = ApiOkResponse({ type: PermissionCodesDto, description: "The group's permission codes after the call." });
const LAST_MANAGER =
  'A change that would leave the organisation with no active person able to manage people answers 409 `last_people_manager` and changes nothing.';

/** The `/permissions` sub-resource of a group: each call answers the group's codes. */
@ApiTags('Groups')
@Controller('v1/groups/:id/permissions')
export class GroupPermissionsController {
  constructor(private readonly groups: GroupsService) {}

  @Get()
  @RequireScopes('groups:read')
  @ApiGroupId()
  @ApiOperation({ operationId: 'getGroupPermissions', summary: "A group's permission codes", description: 'Scope `groups:read`.' })
  @CODES
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<PermissionCodesDto> {
    return { data: await this.groups.getPermissions(p.organisationId, id) };
  }

  @Put()
  @RequireScopes('groups:write')
  @ApiGroupId()
  @ApiOperation({ operationId: 'setGroupPermissions', summary: "Replace a group's permission codes", description: `${LAST_MANAGER} Scope \`groups:write\`.` })
  @CODES
  @ApiErrors('permission_not_grantable', 'last_people_manager', 'validation_failed', 'unknown_permission')
  async set(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: SetPermissionsDto): Promise<PermissionCodesDto> {
    return { data: await this.groups.setPermissions(p.organisationId, id, body.permissions) };
  }

  @Post()
  @HttpCode(200)
  @Idempotent()
  @RequireScopes('groups:write')
  @ApiGroupId()
  @ApiOperation({
    operationId: 'addGroupPermission',
    summary: 'Add one permission code to a group',
    description: 'Adding a code the group already holds changes nothing and answers 200 with the list. IK. Scope `groups:write`.',
  })
  @CODES
  @ApiErrors('permission_not_grantable', 'idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused', 'unknown_permission')
  async add(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: AddPermissionDto): Promise<PermissionCodesDto> {
    return { data: await this.groups.addPermission(p.organisationId, id, body.code) };
  }

  @Delete(':code')
  @RequireScopes('groups:write')
  @ApiGroupId()
  @ApiParam({ name: 'code', description: 'A permission code, e.g. `documents.send`.', schema: { type: 'string' } })
  @ApiOperation({
    operationId: 'removeGroupPermission',
    summary: 'Remove one permission code from a group',
    description:
      'A known code the group does not hold changes nothing and answers 200 with the list. An unknown code answers 422 ' +
      '`unknown_permission`; a code that is not grantable (it can be neither given nor taken away through the API) answers 422 ' +
      `\`validation_failed\` naming \`code\`. ${LAST_MANAGER} Scope \`groups:write\`.`,
  })
  @CODES
  @ApiErrors('last_people_manager', 'validation_failed', 'unknown_permission')
  async remove(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Param('code') code: string): Promise<PermissionCodesDto> {
    return { data: await this.groups.removePermission(p.organisationId, id, code) };
  }
}
