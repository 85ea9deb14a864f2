import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe, SyncPageQueryDto, SYNC_LIST_NOTE, syncPageRequest, ApiData, ApiErrors, NoBodyPipe, ApiIdParam } from '@web/http';
import { Idempotent } from '@web/idempotency';
import type { Response } from 'express';
import { CasesService } from '../cases.service';
import { presentCase } from './case.presenter';
import { CaseDto, CaseUrlDto } from './dto/case.dto';
import { CreateCaseDto } from './dto/create-case.dto';

@ApiTags('Cases')
@Controller('v1/cases')
export class CasesController {
  constructor(private readonly cases: CasesService) {}

  @Get()
  @RequireScopes('cases:read')
  @ApiOperation({
    operationId: 'listCases',
    summary: 'List cases',
    description: `Cases of the organisation, newest first. Scope \`cases:read\`.${SYNC_LIST_NOTE}`,
  })
  @ApiData(CaseDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() query: SyncPageQueryDto): Promise<{ data: CaseDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await this.cases.list(p.organisationId, syncPageRequest(query));
    return { data: items.map(presentCase), next_cursor: nextCursor };
  }

  @Post()
  @RequireScopes('cases:write')
  @Idempotent()
  @ApiOperation({
    operationId: 'openCase',
    summary: 'Open a case under your own reference',
    description:
      'Scope `cases:write`. Opens a case and answers 201. If the organisation already has a case with this `external_ref`, ' +
      'that case is answered unchanged with 200 (its title and group are not updated), also when several such requests run at once: ' +
      'exactly one of them opens the case. A `group_id` must name a group of this organisation (422 `validation_failed` otherwise).',
  })
  @ApiData(CaseDto, { status: 201, description: 'The case was opened.' })
  @ApiData(CaseDto, { status: 200, description: 'A case with this `external_ref` already exists: it is answered as it is.' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async open(@CurrentPrincipal() p: Principal, @Body() body: CreateCaseDto, @Res({ passthrough: true }) res: Response): Promise<{ data: CaseDto }> {
    const { case: opened, created } = await this.cases.open(p.organisationId, { externalRef: body.external_ref, title: body.title, groupId: body.group_id });
    res.status(created ? 201 : 200);
    return { data: presentCase(opened) };
  }

  @Get(':id')
  @RequireScopes('cases:read')
  @ApiIdParam('case')
  @ApiOperation({ operationId: 'getCase', summary: 'Get a case', description: 'Scope `cases:read`. A case of another organisation answers 404.' })
  @ApiData(CaseDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<{ data: CaseDto }> {
    return { data: presentCase(await this.cases.get(p.organisationId, id)) };
  }

  @Post(':id/conversations')
  @HttpCode(201)
  @RequireScopes('cases:write')
  @Idempotent()
  @ApiIdParam('case')
  @ApiOperation({
    operationId: 'getCaseConversationUrl',
    summary: 'Address to start a conversation in a case',
    description:
      "Scope `cases:write`. Takes no body. Answers the https address in the platform's member app that a signed-in member opens " +
      'to start a conversation in this case; the conversation itself is made by the member app, and read here once it exists. ' +
      'A closed case answers 409 `case_closed`.',
  })
  @ApiData(CaseUrlDto, { status: 201 })
  @ApiErrors('case_closed', 'idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async conversationUrl(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Body(NoBodyPipe) _body: unknown,
  ): Promise<{ data: CaseUrlDto }> {
    return { data: await this.cases.conversationUrl(p.organisationId, id) };
  }
}
