import { Module } from '@nestjs/common';
import { WebhooksDomainModule } from '@app/domain';
import { IdempotencyModule } from '@app/idempotency';
import { WebhooksController } from './webhooks.controller';

/** Webhook management over REST. */
@Module({ imports: [WebhooksDomainModule, IdempotencyModule], controllers: [WebhooksController] })
export class WebhooksModule {}
