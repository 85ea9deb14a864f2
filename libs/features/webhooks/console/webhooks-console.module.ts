import { Module } from '@nestjs/common';
import { ConnectionsModule } from '@features/connections';
import { ConsoleModule } from '@web/console';
import { WebhooksModule } from '../webhooks.module';
import { DeliveriesPageController } from './deliveries.controller';
import { WebhookEnablePageController } from './enable.controller';
import { SecretRotationPageController } from './secret-rotation.controller';
import { WebhooksPageController } from './webhooks.controller';

/** The Integrations section's webhook pages and delivery log. */
@Module({
  imports: [ConsoleModule, ConnectionsModule, WebhooksModule],
  controllers: [WebhooksPageController, DeliveriesPageController, SecretRotationPageController, WebhookEnablePageController],
})
export class WebhooksConsoleModule {}
