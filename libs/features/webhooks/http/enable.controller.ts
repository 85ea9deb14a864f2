import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { ApiData, ApiErrors, ApiIdParam, DigitsIdPipe } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { WebhookEnableService } from '../webhook-enable.service';
import { time } from '@web/http';
import { EnableResultDto, EnableWebhookDto } from './dto/enable.dto';
import { ENABLE_RULES } from './enable.api-docs';
import { presentWebhook } from './webhook.presenter';

/** Switching a webhook back on: a new path beside the contract's, confined to the calling connection's webhooks. */
@ApiTags('Webhooks')
@Controller('v1/webhooks/:id')
@RequireScopes('webhooks:manage')
export class EnableController {
  constructor(private readonly enabling: WebhookEnableService) {}

  @Post('enable')
  @HttpCode(200)
  @Idempotent()
  @ApiIdParam('webhook')
  @ApiOperation({ operationId: 'enableWebhook', summary: 'Switch a switched-off webhook back on', description: ENABLE_RULES })
  @ApiData(EnableResultDto)
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async enable(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: EnableWebhookDto): Promise<{ data: EnableResultDto }> {
    const since = time(body?.recover_since, 'recover_since', 'validation_failed');
    const r = await this.enabling.enable(p.connectionId, p.organisationId, id, since);
    return {
      data: {
        webhook: presentWebhook(r.webhook),
        switched_on: r.switchedOn,
        recovery: r.recovery ? { resent: r.recovery.resent, more: r.recovery.more } : null,
      },
    };
  }
}
