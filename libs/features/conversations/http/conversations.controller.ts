import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { SyncPageQueryDto, SYNC_LIST_NOTE, syncPageRequest, ApiData, ApiDataArray } from '@web/http';
import { ConversationsService } from '../conversations.service';
import { presentConversation, presentFact, presentSummary, presentTurn } from './conversation.presenter';
import { ConversationIdPipe } from './conversation-id.pipe';
import { ConversationDto, FactDto, SummaryDto, TurnDto } from './dto/conversation.dto';

const CONVERSATION_ID = {
  name: 'id',
  description: 'Id of the conversation: 32 lowercase hex characters (anything else answers 404).',
  schema: { type: 'string', pattern: '^[0-9a-f]{32}$' },
} as const;

/** Read-only: conversations are made by the platform's interpreting app, not through this API. */
@ApiTags('Conversations')
@Controller('v1/conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @RequireScopes('conversations:read')
  @ApiOperation({
    operationId: 'listConversations',
    summary: 'List conversations',
    description: `Conversations of the organisation, newest first. Scope \`conversations:read\`.${SYNC_LIST_NOTE}`,
  })
  @ApiData(ConversationDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() query: SyncPageQueryDto): Promise<{ data: ConversationDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await this.conversations.list(p.organisationId, syncPageRequest(query));
    return { data: items.map(presentConversation), next_cursor: nextCursor };
  }

  @Get(':id')
  @RequireScopes('conversations:read')
  @ApiParam(CONVERSATION_ID)
  @ApiOperation({ operationId: 'getConversation', summary: 'Get a conversation', description: 'Scope `conversations:read`.' })
  @ApiData(ConversationDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', ConversationIdPipe) id: string): Promise<{ data: ConversationDto }> {
    return { data: presentConversation(await this.conversations.get(p.organisationId, id)) };
  }

  @Get(':id/facts')
  @RequireScopes('conversations:read')
  @ApiParam(CONVERSATION_ID)
  @ApiOperation({
    operationId: 'listConversationFacts',
    summary: 'Facts of a conversation',
    description: 'Scope `conversations:read`. Every fact, in the order recorded; not paged.',
  })
  @ApiDataArray(FactDto)
  async facts(@CurrentPrincipal() p: Principal, @Param('id', ConversationIdPipe) id: string): Promise<{ data: FactDto[] }> {
    return { data: (await this.conversations.facts(p.organisationId, id)).map(presentFact) };
  }

  @Get(':id/transcript')
  @RequireScopes('conversations:read')
  @ApiParam(CONVERSATION_ID)
  @ApiOperation({
    operationId: 'getConversationTranscript',
    summary: 'Transcript of a conversation',
    description: 'Scope `conversations:read`. Every turn in order (`seq` from 1), each as spoken and as translated into the other language; not paged.',
  })
  @ApiDataArray(TurnDto)
  async transcript(@CurrentPrincipal() p: Principal, @Param('id', ConversationIdPipe) id: string): Promise<{ data: TurnDto[] }> {
    return { data: (await this.conversations.transcript(p.organisationId, id)).map(presentTurn) };
  }

  @Get(':id/summary')
  @RequireScopes('summaries:read')
  @ApiParam(CONVERSATION_ID)
  @ApiOperation({
    operationId: 'getConversationSummary',
    summary: 'Summary of a conversation',
    description:
      'Scope `summaries:read`. Summaries exist only where the organisation has conversation review on. ' +
      'Where it is off, this call answers 404 `not_found` with a message saying that conversation review is off for the organisation. ' +
      'Where it is on but no summary has been written yet, it answers 404 `not_found` saying so; `summary.ready` is sent when one is written or rewritten.',
  })
  @ApiData(SummaryDto)
  @ApiResponse({
    status: 404,
    description: '`not_found`: conversation review is off for the organisation, or no summary has been written yet (the message says which)',
    schema: { $ref: '#/components/schemas/Error' },
  })
  async summary(@CurrentPrincipal() p: Principal, @Param('id', ConversationIdPipe) id: string): Promise<{ data: SummaryDto }> {
    return { data: presentSummary(await this.conversations.summary(p.organisationId, id)) };
  }
}
