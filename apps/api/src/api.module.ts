import { DynamicModule, Module, Type } from '@nestjs/common';
import { AuthModule } from '@app/auth';
import { AppConfig, ConfigModule } from '@app/config';
import { DatabaseModule } from '@app/database';
import { ApiKeysService, DomainModule, ENTITIES } from '@app/domain';
import { LoggingModule } from '@app/logging';
import { MetricsModule } from '@app/metrics';
import { TelemetryModule } from '@app/telemetry';
import { QueueModule } from '@app/queue';
import { CasesModule } from './cases/cases.module';
import { DocumentsModule } from './documents/documents.module';
import { ConversationsModule } from './conversations/conversations.module';
import { GroupsModule } from './groups/groups.module';
import { HealthModule } from './health/health.module';
import { HttpDrain } from './http-drain';
import { InvitationPageModule } from './invitations-page/invitation-page.module';
import { ConsoleModule } from './console/console.module';
import { PeopleModule } from './people/people.module';
import { ScimModule } from './scim/scim.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { MeModule } from './me/me.module';
import { MetricsServer } from './metrics/metrics-server';
import { OpenApiModule } from './openapi/openapi.module';

@Module({})
export class ApiModule {
  /** `config` replaces reading the environment; `extra` adds modules (tests only). */
  static forRoot(config?: AppConfig, extra: Type<unknown>[] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('api'),
        MetricsModule,
        TelemetryModule,
        DatabaseModule.forRoot('api', { entities: ENTITIES, runMigrations: true }),
        QueueModule.forRoot({ producerOnly: true }),
        AuthModule.forRoot({ imports: [DomainModule], keyLookup: ApiKeysService }),
        HealthModule,
        OpenApiModule,
        MeModule,
        GroupsModule,
        PeopleModule,
        InvitationPageModule,
        ConsoleModule,
        CasesModule,
        ConversationsModule,
        ScimModule,
        WebhooksModule,
        DocumentsModule.forRoot(),
        ...extra,
      ],
      providers: [HttpDrain, MetricsServer],
    };
  }
}
