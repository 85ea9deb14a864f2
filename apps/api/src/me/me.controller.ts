import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal } from '@app/auth';
import { ApiData } from '../common/api-docs';
import { MeDto } from './dto/me.dto';

@ApiTags('Connection')
@Controller('v1/me')
export class MeController {
  @Get()
  @ApiOperation({ operationId: 'getMe', summary: 'The connection the key belongs to', description: 'Any valid key; no scope needed.' })
  @ApiData(MeDto)
  // Answered from what the guard found for this call (one lookup, usually cached): no query here.
  me(@CurrentPrincipal() p: Principal): { data: MeDto } {
    return {
      data: {
        id: p.connectionId,
        name: p.connectionName,
        scopes: p.scopes,
        created_at: p.connectionCreatedAt.toISOString(),
        organisation: { id: p.organisationId, name: p.organisationName },
        key: { id: p.keyId, last_four: p.keyLastFour },
      },
    };
  }
}
