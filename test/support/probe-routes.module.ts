import { Body, Controller, Get, HttpCode, Module, Post, Query } from '@nestjs/common';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { CursorCodec, paginate, TransactionHost } from '@kernel/database';
import { ConnectionEntity } from '@features/connections';
import { OrganisationsModule, OrganisationsService } from '@features/organisations';
import { PageQueryDto } from '@web/http';
import { Idempotent, IdempotencyModule } from '@web/idempotency';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

class ProbeCreateDto {
  @IsString()
  @MaxLength(50)
  name: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  delay_ms?: number;

  /** Tenths of a second to wait before touching the database at all. */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  wait_first?: number;
}

/**
 * Test-only routes that exercise the shared libs (guard scopes, validation, idempotency,
 * pagination, the 500 path) through the real app before domain routes exist for them.
 */
@Controller('v1/_probe')
class ProbeController {
  constructor(
    private readonly organisations: OrganisationsService,
    private readonly tx: TransactionHost,
    private readonly cursors: CursorCodec,
  ) {}

  @Get('scoped')
  @RequireScopes('cases:read')
  scoped(): { data: { ok: boolean } } {
    return { data: { ok: true } };
  }

  @Post('things')
  @HttpCode(201)
  @Idempotent()
  async create(@Body() body: ProbeCreateDto): Promise<{ data: { id: string; name: string } }> {
    // Creates a real row in the same transaction the interceptor opened; the optional delay
    // widens the window in which a concurrent repeat sees the key in progress.
    if (body.wait_first) await new Promise((r) => setTimeout(r, body.wait_first! * 100));
    const org = await this.organisations.create(body.name);
    if (body.delay_ms) await new Promise((r) => setTimeout(r, body.delay_ms! * 100));
    return { data: { id: org.id, name: org.name } };
  }

  @Get('connections')
  async list(@CurrentPrincipal() p: Principal, @Query() page: PageQueryDto) {
    const qb = this.tx.manager.getRepository(ConnectionEntity).createQueryBuilder('c').where('c.organisation_id = :org', { org: p.organisationId });
    const { items, nextCursor } = await paginate(qb, page, this.cursors);
    return { data: items.map((c) => ({ id: c.id, name: c.name })), next_cursor: nextCursor };
  }

  @Get('boom')
  boom(): never {
    throw new Error('kaboom: internal detail that must not leak');
  }
}

@Module({ imports: [OrganisationsModule, IdempotencyModule], controllers: [ProbeController] })
export class ProbeRoutesModule {}
