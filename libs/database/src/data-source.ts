import 'reflect-metadata';
import { AppConfig } from '@app/config';
// The one place this library reads the domain: the TypeORM CLI's leaf, never loaded by the apps.
import { ENTITIES } from '@app/domain';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';

/** For the TypeORM CLI (`migration:generate`); the apps build theirs through DatabaseModule. */
export default new DataSource(dataSourceOptions(AppConfig.fromEnv(), 'typeorm-cli', ENTITIES));
