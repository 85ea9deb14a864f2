import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { DigitsIdPipe, PageQueryDto, NoBodyPipe, ApiData, ApiErrors, ApiIdParam } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { CreateWebhookDto } from './dto/create-webhook.dto';
import { CreatedWebhookDto, WebhookDto, WebhookTestResultDto } from './dto/webhook.dto';
import { hideSecret, presentCreatedWebhook, presentTest, presentWebhook } from './webhook.presenter';
import { WebhooksService } from '../webhooks.service';
import { WebhookTestService } from '../webhook-test.service';
import { CREATE_WEBHOOK_RULES, TEST_WEBHOOK_RULES } from './webhooks.api-docs';

const ApiWebhookId = () => ApiIdParam('webhook');

/** A connection's webhooks. Every call needs `webhooks:manage` and sees only the calling connection's webhooks. */
@ApiTags('Webhooks')
@Controller('v1/webhooks')
@RequireScopes('webhooks:manage')
export class WebhooksController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly tests: WebhookTestService,
  ) {}

  @Get()
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    description: "The connection's webhooks, newest first; never their secrets. Scope `webhooks:manage`.",
  })
  @ApiData(WebhookDto, { list: true })
  async list(@CurrentPrincipal() p: Principal, @Query() page: PageQueryDto): Promise<{ data: WebhookDto[]; next_cursor: string | null }> {
    const { items, nextCursor } = await this.webhooks.list(p.connectionId, page);
    return { data: items.map(presentWebhook), next_cursor: nextCursor };
  }

  @Post()
  @HttpCode(201)
  @Idempotent({ replay: hideSecret, network: true })
  @ApiOperation({ operationId: 'createWebhook', summary: 'Add a webhook', description: CREATE_WEBHOOK_RULES })
  @ApiData(CreatedWebhookDto, { status: 201, description: 'Added; the answer carries the secret, once.' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async create(@CurrentPrincipal() p: Principal, @Body() body: CreateWebhookDto): Promise<{ data: CreatedWebhookDto }> {
    const { webhook, secret } = await this.webhooks.create(p, { url: body.url, events: body.events });
    return { data: presentCreatedWebhook(webhook, secret) };
  }

  @Get(':id')
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'getWebhook',
    summary: 'Get a webhook',
    description: "Never its secret. Another connection's webhook answers 404. Scope `webhooks:manage`.",
  })
  @ApiData(WebhookDto)
  async get(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<{ data: WebhookDto }> {
    return { data: presentWebhook(await this.webhooks.get(p.connectionId, id)) };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiWebhookId()
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Remove a webhook',
    description:
      'No event is sent to it any more; its deliveries still waiting for an attempt are given up (reason `webhook_removed`). Scope `webhooks:manage`.',
  })
  @ApiNoContentResponse({ description: 'Removed.' })
  async remove(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string): Promise<void> {
    await this.webhooks.remove(p.connectionId, id);
  }

  @Post(':id/test')
  @HttpCode(200)
  @Idempotent({ network: true })
  @ApiWebhookId()
  @ApiOperation({ operationId: 'testWebhook', summary: 'Send a test event now', description: TEST_WEBHOOK_RULES })
  @ApiData(WebhookTestResultDto, { description: 'The test was sent (delivered or not: see `delivered`).' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused', 'rate_limited')
  async test(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Body(NoBodyPipe) _body: unknown,
  ): Promise<{ data: WebhookTestResultDto }> {
    return { data: presentTest(await this.tests.test(p, id)) };
  }
}
