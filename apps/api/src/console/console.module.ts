import { Module } from '@nestjs/common';
import { DomainModule, WebhooksDomainModule } from '@app/domain';
import { RedisModule } from '@app/redis';
import { ConsoleAssetsController } from './assets.controller';
import { ConsoleExceptionFilter } from './console-exception.filter';
import { ConsoleGuard } from './console.guard';
import { ConsoleSecret } from './console-secret';
import { ConsoleViews } from './console-views';
import { ConnectionsPageController } from './connections.controller';
import { DeliveriesPageController } from './deliveries.controller';
import { PolicyPageController } from './policy.controller';
import { ConsoleReveals, RevealController } from './reveals';
import { SignInController } from './sign-in.controller';
import { SignInThrottle } from './sign-in-throttle';
import { WebhooksPageController } from './webhooks.controller';

/**
 * The Integrations section: server-rendered pages under /console on the api's own HTTPS origin,
 * for the people of an organisation who manage its integrations. Every change goes through the
 * same domain services as the REST API and the CLI.
 */
@Module({
  imports: [DomainModule, WebhooksDomainModule, RedisModule],
  controllers: [
    ConsoleAssetsController,
    SignInController,
    ConnectionsPageController,
    RevealController,
    PolicyPageController,
    WebhooksPageController,
    DeliveriesPageController,
  ],
  providers: [ConsoleViews, ConsoleSecret, ConsoleGuard, ConsoleExceptionFilter, SignInThrottle, ConsoleReveals],
})
export class ConsoleModule {}
