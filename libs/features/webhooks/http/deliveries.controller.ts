import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { ApiData, ApiErrors, ApiIdParam, DigitsIdPipe, NoBodyPipe, parseTime } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { DomainError, notFound } from '@kernel/core';
import { DeliveryLogService, LoggedDelivery } from '../delivery-log.service';
import { WebhooksService } from '../webhooks.service';
import { DeliveryDetailDto, DeliveryDto, DeliveryListQueryDto, RecoverDeliveriesDto, RecoveryResultDto, ResendResultDto } from './dto/delivery.dto';
import { presentDelivery, presentDeliveryDetail, presentListed } from './webhook.presenter';
import { LIST_DELIVERIES_RULES, GET_DELIVERY_RULES, RECOVER_RULES, RESEND_DELIVERY_RULES } from './deliveries.api-docs';

const ApiDeliveryId = () =>
  ApiParam({ name: 'delivery_id', description: 'Id of the delivery (the body’s `id`).', schema: { type: 'string', pattern: '^[0-9a-f]{32}$' } });

/** The deliveries' times are parsed like every time in a query or body (`parseTime`). */
export const time = parseTime;

/**
 * A webhook's deliveries over REST: the log, one delivery with its exchanges, resending one (or
 * trying a waiting one now), and recovering after an outage. New paths beside the contract's; the
 * same rules as the console (DeliveryLogService), confined to the calling connection's webhooks.
 */
@ApiTags('Webhooks')
@Controller('v1/webhooks/:id')
@RequireScopes('webhooks:manage')
export class DeliveriesController {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly log: DeliveryLogService,
  ) {}

  @Get('deliveries')
  @ApiIdParam('webhook')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: "List a webhook's deliveries", description: LIST_DELIVERIES_RULES })
  @ApiData(DeliveryDto, { list: true })
  async list(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Query() query: DeliveryListQueryDto,
  ): Promise<{ data: DeliveryDto[]; next_cursor: string | null }> {
    const hook = await this.webhooks.get(p.connectionId, id);
    const since = time(query.since, 'since', 'invalid_request');
    const until = time(query.until, 'until', 'invalid_request');
    if (since && until && until.getTime() <= since.getTime()) throw new DomainError('invalid_request', 'until: must be later than since');
    const page = await this.log.list(hook.id, { limit: query.limit, cursor: query.cursor }, p.organisationId, {
      state: query.state,
      event: query.event,
      since,
      until,
    });
    return { data: page.items.map(presentListed), next_cursor: page.nextCursor };
  }

  @Get('deliveries/:delivery_id')
  @ApiIdParam('webhook')
  @ApiDeliveryId()
  @ApiOperation({ operationId: 'getWebhookDelivery', summary: 'Get a delivery with every attempt’s exchange', description: GET_DELIVERY_RULES })
  @ApiData(DeliveryDetailDto)
  async get(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Param('delivery_id') deliveryId: string,
  ): Promise<{ data: DeliveryDetailDto }> {
    return { data: presentDeliveryDetail(await this.delivery(p, id, deliveryId)) };
  }

  @Post('deliveries/:delivery_id/resend')
  @HttpCode(202)
  @Idempotent()
  @ApiIdParam('webhook')
  @ApiDeliveryId()
  @ApiOperation({ operationId: 'resendWebhookDelivery', summary: 'Resend a delivery, or try a waiting one now', description: RESEND_DELIVERY_RULES })
  @ApiData(ResendResultDto, { status: 202, description: 'Accepted: the workers send it now.' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async resend(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Param('delivery_id') deliveryId: string,
    @Body(NoBodyPipe) _body: unknown,
  ): Promise<{ data: ResendResultDto }> {
    const found = await this.delivery(p, id, deliveryId, false);
    const { delivery, action } = await this.log.resendOrTryNow(found.delivery.id, p.organisationId);
    const last = found.attempts[found.attempts.length - 1];
    return { data: { action, delivery: presentDelivery(delivery, last) } };
  }

  @Post('recover')
  @HttpCode(202)
  @Idempotent()
  @ApiIdParam('webhook')
  @ApiOperation({
    operationId: 'recoverWebhookDeliveries',
    summary: 'Send now what failed, was given up or is waiting since a time',
    description: RECOVER_RULES,
  })
  @ApiData(RecoveryResultDto, { status: 202, description: 'Accepted: the workers send them now.' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async recover(
    @CurrentPrincipal() p: Principal,
    @Param('id', DigitsIdPipe) id: string,
    @Body() body: RecoverDeliveriesDto,
  ): Promise<{ data: RecoveryResultDto }> {
    const hook = await this.webhooks.get(p.connectionId, id);
    const since = time(body.since, 'since', 'validation_failed')!;
    const until = time(body.until, 'until', 'validation_failed');
    const r = await this.log.recover(hook.id, since, until, p.organisationId);
    return { data: { sent: r.resent + r.triedNow, resent: r.resent, tried_now: r.triedNow, more: r.more } };
  }

  /** The delivery, only if it belongs to this webhook of the calling connection. */
  private async delivery(p: Principal, webhookId: string, deliveryId: string, exchange = true): Promise<LoggedDelivery> {
    const hook = await this.webhooks.get(p.connectionId, webhookId);
    const logged = await this.log.get(deliveryId, p.organisationId, exchange);
    if (logged.delivery.webhookId !== hook.id) throw notFound('delivery');
    return logged;
  }
}
