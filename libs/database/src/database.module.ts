import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions, EntityList } from './data-source-options';

@Module({})
export class DatabaseModule {
  /**
   * `entities` are the application's (the domain's list: this library does not load it);
   * `runMigrations` only where the process is allowed to migrate (never the worker).
   */
  static forRoot(applicationName: string, { entities, runMigrations = false }: { entities: EntityList; runMigrations?: boolean }): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config, applicationName, entities),
            migrationsRun: runMigrations && config.migrationsRunOnStart,
            // A process that cannot reach Postgres fails fast and says so (orchestrators restart it).
            retryAttempts: 3,
            retryDelay: 1000,
          }),
        }),
      ],
    };
  }
}
