import { AppConfig } from '@kernel/config';
import { DataSourceOptions } from 'typeorm';

/** The entity classes a data source maps (TypeORM's own type for them). */
export type EntityList = NonNullable<DataSourceOptions['entities']>;
import { MIGRATIONS } from './migrations';
import { NestTypeOrmLogger } from './typeorm-logger';

/**
 * The one data source definition, for the apps, the admin CLI and the TypeORM CLI. `entities` come
 * from the caller (the domain's list), so this library never loads the domain; migrations need none.
 * `direct`: on DATABASE_DIRECT_URL instead of the (maybe pooled) DATABASE_URL, for migrations, which
 * must not go through a transaction-mode pooler (see docs/operations/scale.md, "A connection pooler").
 */
export function dataSourceOptions(config: AppConfig, applicationName = 'integrations', entities: EntityList = [], direct = false): DataSourceOptions {
  return {
    type: 'postgres',
    url: direct ? config.databaseDirectUrl : config.databaseUrl,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['error'],
    logger: new NestTypeOrmLogger(),
    applicationName,
    extra: { max: config.databasePoolSize, connectionTimeoutMillis: 5000 },
  };
}
