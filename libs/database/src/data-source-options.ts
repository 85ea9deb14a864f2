import { AppConfig } from '@app/config';
import { DataSourceOptions } from 'typeorm';

/** The entity classes a data source maps (TypeORM's own type for them). */
export type EntityList = NonNullable<DataSourceOptions['entities']>;
import { MIGRATIONS } from './migrations';
import { NestTypeOrmLogger } from './typeorm-logger';

/**
 * The one data source definition, for the apps, the admin CLI and the TypeORM CLI. `entities` come
 * from the caller (the domain's list), so this library never loads the domain; migrations need none.
 */
export function dataSourceOptions(config: AppConfig, applicationName = 'integrations', entities: EntityList = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
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
