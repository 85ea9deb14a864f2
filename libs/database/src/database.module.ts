import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/config';
import { dataSourceOptions } from './data-source-options';

@Module({})
export class DatabaseModule {
  /** `runMigrations` only where the process is allowed to migrate (never the worker). */
  static forRoot(applicationName: string, runMigrations = false): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig) => ({
            ...dataSourceOptions(config, applicationName),
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
