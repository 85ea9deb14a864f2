import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { DomainModule, ENTITIES } from '@app/domain';
import { RedisModule } from '@app/redis';

/**
 * The operator CLI's context: no routes, no queues. RedisModule is needed because the domain
 * services announce auth-cache invalidations through Redis once their transaction commits.
 */
@Module({})
export class AdminModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AdminModule,
      imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot('admin', { entities: ENTITIES }), RedisModule, DomainModule],
    };
  }
}
