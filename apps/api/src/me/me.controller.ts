import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ConnectionsService } from '@app/domain';
import { ApiData } from '../common/api-docs';
import { MeDto } from './dto/me.dto';

@ApiTags('Connection')
@Controller('v1/me')
export class MeController {
  constructor(private readonly connections: ConnectionsService) {}

  @Get()
  @ApiOperation({ operationId: 'getMe', summary: 'The connection the key belongs to', description: 'Any valid key; no scope needed.' })
  @ApiData(MeDto)
  async me(@CurrentPrincipal() principal: Principal): Promise<{ data: MeDto }> {
    const { connection, organisation, key } = await this.connections.describe(principal.connectionId, principal.keyId);
    return {
      data: {
        id: connection.id,
        name: connection.name,
        scopes: connection.scopes,
        created_at: connection.createdAt.toISOString(),
        organisation: { id: organisation.id, name: organisation.name },
        key: { id: key.id, last_four: key.lastFour },
      },
    };
  }
}
