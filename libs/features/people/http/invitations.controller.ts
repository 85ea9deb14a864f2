import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { InvitationsService } from '../invitations.service';
import { DigitsIdPipe, SyncPageQueryDto, SYNC_LIST_NOTE, syncPageRequest, ApiData } from '@web/http';
import { InvitationDto } from './dto/invitation.dto';
import { ApiIdParam } from './people-api-docs';
import { presentInvitation } from './people.presenter';

@ApiTags('People')
@Controller('v1/invitations')
export class InvitationsController {
  constructor(private readonly invitations: InvitationsService) {}

  @Get()
  @RequireScopes('users:read')
  @ApiOperation({
    operationId: 'listInvitations',
    summary: 'List invitations not yet answered',
    description:
      'Pending invitations, newest first. One past its `expires_at` is listed with status `expired` until it is withdrawn or the address is added again ' +
      `(with \`updated_since\`, as of the walk's start, so that the change is listed by the walk that covers it).${SYNC_LIST_NOTE}`,
  })
  @ApiData(InvitationDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() query: SyncPageQueryDto): Promise<{ data: InvitationDto[]; next_cursor: string | null }> {
    const { items, nextCursor, horizon } = await this.invitations.list(p.organisationId, syncPageRequest(query));
    // A walk by updated_since shows expiry as of its horizon, the time its filter took it at.
    const now = horizon ?? new Date();
    return { data: items.map((i) => presentInvitation(i, now)), next_cursor: nextCursor };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScopes('users:write')
  @ApiOperation({
    operationId: 'withdrawInvitation',
    summary: 'Withdraw an invitation',
    description: 'Its accept link stops working. An invitation that is no longer pending (accepted or already withdrawn) answers 404.',
  })
  @ApiIdParam('invitation')
  @ApiNoContentResponse({ description: 'Withdrawn.' })
  async withdraw(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.invitations.withdraw(p.organisationId, id);
  }
}
