import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { DomainModule, ENTITIES, WebhooksDomainModule } from '@app/domain';

/**
 * The operator CLI's context: no routes, no queues; the domain (whose services announce
 * auth-cache invalidations through Redis once their transaction commits) and the delivery log.
 */
@Module({})
export class AdminModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot('admin', { entities: ENTITIES }), DomainModule, WebhooksDomainModule],
    };
  }
}
