import { Module, OnModuleInit } from '@nestjs/common';
import { useErrorDialect } from '@web/http';
import { CoreModule } from '@kernel/database';
import { MailModule } from '@kernel/mail';
import { RedisModule } from '@kernel/redis';
import { ConsoleAssetsController } from './assets.controller';
import { ConsoleAccessModule } from './console-access.service';
import { ConsoleErrorDialect } from './console-error-dialect';
import { ConsoleExceptionFilter } from './console-exception.filter';
import { ConsoleGuard } from './console.guard';
import { ConsoleSecret } from './console-secret';
import { ConsoleViews } from './console-views';
import { ConsoleReveals, RevealController } from './reveals';
import { SignInController } from './sign-in.controller';
import { SignInThrottle } from './sign-in-throttle';

/** What a feature's pages use: views, the guard, the error page, one-time reveals, the signed-in viewer. */
const KIT = [ConsoleViews, ConsoleSecret, ConsoleGuard, ConsoleExceptionFilter, ConsoleReveals];

/**
 * The Integrations section's shared kit: server-rendered pages under /console on the api's own
 * HTTPS origin, for the people of an organisation who manage its integrations. This module serves
 * sign-in, the one-time reveals and the assets, and answers any other address under /console with
 * its 404 or 405 page (ConsoleErrorDialect; the composition root opens the area to callers without a key); each feature's console/ module adds its pages on
 * the kit it exports, through the same services as the REST API and the CLI.
 */
@Module({
  imports: [CoreModule, RedisModule, MailModule, ConsoleAccessModule],
  controllers: [ConsoleAssetsController, SignInController, RevealController],
  providers: [...KIT, SignInThrottle, ConsoleErrorDialect],
  exports: [...KIT, ConsoleAccessModule],
})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly dialect: ConsoleErrorDialect) {}

  /** Errors under /console that no console page handles (an unknown address, a wrong method) answer as console pages. */
  onModuleInit(): void {
    useErrorDialect(this.dialect);
  }
}
