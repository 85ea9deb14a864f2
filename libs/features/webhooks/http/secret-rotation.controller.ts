import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Principal, RequireScopes } from '@web/auth';
import { ApiData, ApiErrors, ApiIdParam, DigitsIdPipe } from '@web/http';
import { Idempotent } from '@web/idempotency';
import { WebhookSecretRotationService } from '../webhook-secret-rotation.service';
import { RotatedSecretDto, RotateSecretDto } from './dto/rotate-secret.dto';
import { ROTATE_SECRET_RULES } from './secret-rotation.api-docs';

/** A replay of the rotating request: the same answer, the new secret not shown again (nor ever stored with the key). */
export const hideRotatedSecret = (body: unknown): unknown => {
  const b = body as { data: RotatedSecretDto };
  return { data: { ...b.data, secret: null, secret_shown: false } };
};

/** Rotating a webhook's signing secret: a new path beside the contract's, confined to the calling connection's webhooks. */
@ApiTags('Webhooks')
@Controller('v1/webhooks/:id')
@RequireScopes('webhooks:manage')
export class SecretRotationController {
  constructor(private readonly rotation: WebhookSecretRotationService) {}

  @Post('rotate-secret')
  @HttpCode(200)
  @Idempotent({ replay: hideRotatedSecret })
  @ApiIdParam('webhook')
  @ApiOperation({ operationId: 'rotateWebhookSecret', summary: "Rotate a webhook's signing secret", description: ROTATE_SECRET_RULES })
  @ApiData(RotatedSecretDto, { description: 'Rotated; the answer carries the new secret, once.' })
  @ApiErrors('idempotency_key_in_use', 'validation_failed', 'idempotency_key_reused')
  async rotate(@CurrentPrincipal() p: Principal, @Param('id', DigitsIdPipe) id: string, @Body() body: RotateSecretDto): Promise<{ data: RotatedSecretDto }> {
    const r = await this.rotation.rotate(p.connectionId, id, body.current_secret, body.expires_in_seconds);
    return { data: { webhook_id: r.webhookId, secret: r.secret, previous_secret_expires_at: r.previousSecretExpiresAt?.toISOString() ?? null } };
  }
}
