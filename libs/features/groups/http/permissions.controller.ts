import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '@web/auth';
import { PermissionsService } from '../permissions.service';
import { ApiData } from '@web/http';
import { PermissionDto } from './dto/permission.dto';
import { presentPermission } from './group.presenter';

@ApiTags('Groups')
@Controller('v1/permissions')
export class PermissionsController {
  constructor(private readonly permissions: PermissionsService) {}

  @Get()
  @RequireScopes('groups:read')
  @ApiOperation({
    operationId: 'listPermissions',
    summary: 'List the permission codes',
    description:
      'The whole fixed catalogue, in its own order, on one page (`next_cursor` is always null). Codes with `grantable` false ' +
      '(`integrations.manage`, `organisation.own`) cannot be given or taken away through the API. Scope `groups:read`.',
  })
  @ApiData(PermissionDto, { list: true })
  async list(): Promise<{ data: PermissionDto[]; next_cursor: null }> {
    return { data: (await this.permissions.list()).map(presentPermission), next_cursor: null };
  }
}
