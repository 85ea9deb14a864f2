import { DynamicModule, Module, Type } from '@nestjs/common';
import { AppConfig, ConfigModule } from '@kernel/config';
import { DatabaseModule } from '@kernel/database';
import { LoggingModule } from '@kernel/logging';
import { MetricsModule } from '@kernel/metrics';
import { QueueModule } from '@kernel/queue';
import { TelemetryModule } from '@kernel/telemetry';
import { AuthModule } from '@web/auth';
import { ConsoleModule } from '@web/console';
import { OpenApiModule } from '@web/openapi';
import { CasesHttpModule } from '@features/cases/http';
import { ApiKeysService, ConnectionsModule } from '@features/connections';
import { ConnectionsConsoleModule } from '@features/connections/console';
import { MeModule } from '@features/connections/http';
import { ConversationsHttpModule } from '@features/conversations/http';
import { DocumentsHttpModule } from '@features/documents/http';
import { ENTITIES } from '@features/entities';
import { GroupsHttpModule } from '@features/groups/http';
import { OrganisationsConsoleModule } from '@features/organisations/console';
import { InvitationPageModule, PeopleHttpModule } from '@features/people/http';
import { ScimConsoleModule } from '@features/scim/console';
import { ScimHttpModule } from '@features/scim/http';
import { WebhooksConsoleModule } from '@features/webhooks/console';
import { WebhooksHttpModule } from '@features/webhooks/http';
import { HealthModule } from './health/health.module';
import { HttpDrain } from './http-drain';
import { MemberAppStandInModule } from './member-app/member-app-stand-in.controller';
import { MetricsServer } from './metrics/metrics-server';

/**
 * The api's composition root: the kernel, the web kit, and each feature's edges (REST under /v1/,
 * SCIM under /scim/v2/, the Integrations section's pages under /console).
 */
@Module({})
export class ApiModule {
  /** `config` replaces reading the environment; `extra` adds modules (tests only). */
  static forRoot(config: AppConfig = AppConfig.fromEnv(), extra: Type<unknown>[] = []): DynamicModule {
    return {
      module: ApiModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot('api'),
        MetricsModule,
        TelemetryModule,
        DatabaseModule.forRoot('api', { entities: ENTITIES, runMigrations: true }),
        QueueModule.forRoot({ producerOnly: true }),
        AuthModule.forRoot({ imports: [ConnectionsModule], keyLookup: ApiKeysService }),
        HealthModule,
        OpenApiModule,
        MeModule,
        GroupsHttpModule,
        PeopleHttpModule,
        InvitationPageModule,
        ConsoleModule,
        ConnectionsConsoleModule,
        OrganisationsConsoleModule,
        ScimConsoleModule,
        WebhooksConsoleModule,
        CasesHttpModule,
        ConversationsHttpModule,
        ScimHttpModule,
        WebhooksHttpModule,
        DocumentsHttpModule.forRoot(),
        // Only while no member app is configured: with one, its addresses are not the api's to answer.
        ...(config.memberAppStandIn ? [MemberAppStandInModule] : []),
        ...extra,
      ],
      providers: [HttpDrain, MetricsServer],
    };
  }
}
