import { Controller, Get, Req } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Principal, principalOf } from '@web/auth';
import type { Request } from 'express';
import { ApiData } from '@web/http';
import { MeDto } from './dto/me.dto';

@ApiTags('Connection')
@Controller('v1/me')
export class MeController {
  @Get()
  @ApiOperation({ operationId: 'getMe', summary: 'The connection the key belongs to', description: 'Any valid key; no scope needed.' })
  @ApiData(MeDto)
  // Answered from what the guard found for this call (one lookup, usually cached): no query here.
  // A cached principal never changes (a change replaces it), so its answer is built once.
  // The hottest call partners make: it takes the request itself rather than @CurrentPrincipal(),
  // whose custom parameter would go through the global pipe chain (a few promises) for nothing.
  me(@Req() req: Request): { data: MeDto } {
    const p = principalOf(req);
    let answer = this.answers.get(p);
    if (!answer) this.answers.set(p, (answer = this.build(p)));
    return answer;
  }

  private readonly answers = new WeakMap<Principal, { data: MeDto }>();

  private build(p: Principal): { data: MeDto } {
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
