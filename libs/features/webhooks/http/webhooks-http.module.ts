import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module';
import { IdempotencyModule } from '@web/idempotency';
import { WebhooksController } from './webhooks.controller';
import { DeliveriesController } from './deliveries.controller';
import { EnableController } from './enable.controller';
import { SecretRotationController } from './secret-rotation.controller';

/** Webhook management over REST, the webhooks' deliveries, rotating a webhook's secret, and switching one back on. */
@Module({
  imports: [WebhooksModule, IdempotencyModule],
  controllers: [WebhooksController, DeliveriesController, SecretRotationController, EnableController],
})
export class WebhooksHttpModule {}
