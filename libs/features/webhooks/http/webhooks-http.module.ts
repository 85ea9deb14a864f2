import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module';
import { IdempotencyModule } from '@web/idempotency';
import { WebhooksController } from './webhooks.controller';
import { DeliveriesController } from './deliveries.controller';

/** Webhook management over REST, and the webhooks' deliveries. */
@Module({ imports: [WebhooksModule, IdempotencyModule], controllers: [WebhooksController, DeliveriesController] })
export class WebhooksHttpModule {}
