import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module';
import { IdempotencyModule } from '@web/idempotency';
import { WebhooksController } from './webhooks.controller';
import { DeliveriesController } from './deliveries.controller';
import { SecretRotationController } from './secret-rotation.controller';

/** Webhook management over REST, the webhooks' deliveries, and rotating a webhook's secret. */
@Module({ imports: [WebhooksModule, IdempotencyModule], controllers: [WebhooksController, DeliveriesController, SecretRotationController] })
export class WebhooksHttpModule {}
