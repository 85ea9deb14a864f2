import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@kernel/config';
import { DataSource } from 'typeorm';
import type { PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { dataSourceOptions, EntityList } from './data-source-options';
import { migrateLocked } from './migrate';

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
            migrationUrl: config.databaseDirectUrl,
            // A process that cannot reach Postgres fails fast and says so (orchestrators restart it).
            retryAttempts: 3,
            retryDelay: 1000,
          }),
          // `migrationsRun` is done here, not by TypeORM (which takes no lock): through the CLI's
          // locked function, so replicas starting together migrate one after the other, and on the
          // direct connection (DATABASE_DIRECT_URL) when the pool goes through a pooler. The data
          // source is handed out only once migrated, as TypeORM's own would be.
          dataSourceFactory: async (options) => {
            const { migrationsRun, migrationUrl, ...rest } = options as PostgresConnectionOptions & { migrationUrl: string };
            const ds = await new DataSource({ ...rest, migrationsRun: false }).initialize();
            try {
              if (migrationsRun) await migrateDirect(ds, rest, migrationUrl);
              return ds;
            } catch (err) {
              await ds.destroy(); // TypeOrmModule tries again with a new one
              throw err;
            }
          },
        }),
      ],
    };
  }
}

/** Migrates on `ds` when it is the direct connection, else on a short-lived data source of its own on `url`. */
async function migrateDirect(ds: DataSource, options: PostgresConnectionOptions, url: string): Promise<void> {
  if (url === options.url) {
    await migrateLocked(ds, url);
    return;
  }
  const direct = await new DataSource({
    ...options,
    url,
    migrationsRun: false,
    applicationName: `${options.applicationName}-migrate`,
    extra: { ...options.extra, max: 1 },
  }).initialize();
  try {
    await migrateLocked(direct, url);
  } finally {
    await direct.destroy();
  }
}
