import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { InvitationsService } from '../invitations.service';
import { DigitsIdPipe, PageQueryDto, ApiData } from '@web/http';
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
      'Pending invitations, newest first. One past its `expires_at` is listed with status `expired` until it is withdrawn or the address is added again.',
  })
  @ApiData(InvitationDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() page: PageQueryDto): Promise<{ data: InvitationDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await this.invitations.list(p.organisationId, page);
    const now = new Date();
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
