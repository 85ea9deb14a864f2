import { Module } from '@nestjs/common';
import { WebhooksModule } from '../webhooks.module';
import { IdempotencyModule } from '@web/idempotency';
import { WebhooksController } from './webhooks.controller';

/** Webhook management over REST. */
@Module({ imports: [WebhooksModule, IdempotencyModule], controllers: [WebhooksController] })
export class WebhooksHttpModule {}
