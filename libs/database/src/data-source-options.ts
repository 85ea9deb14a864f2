import { AppConfig } from '@app/config';
// The entity list alone, not the domain's barrel: the domain imports this lib (NOTIFY channels).
import { ENTITIES } from '../../domain/src/entities';
import { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { NestTypeOrmLogger } from './typeorm-logger';

/** The one data source definition, for the apps, the admin CLI and the TypeORM CLI. */
export function dataSourceOptions(config: AppConfig, applicationName = 'integrations'): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities: ENTITIES,
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
