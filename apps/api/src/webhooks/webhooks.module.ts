import { Module } from '@nestjs/common';
import { WebhooksController } from './webhooks.controller';

/** Webhook management over REST (the services come from the global WebhooksDomainModule). */
@Module({ controllers: [WebhooksController] })
export class WebhooksModule {}
