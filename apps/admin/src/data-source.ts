import 'reflect-metadata';
import { AppConfig } from '@kernel/config';
// The one place this library reads the domain: the TypeORM CLI's leaf, never loaded by the apps.
import { ENTITIES } from '@features/entities';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@kernel/database';

/** For the TypeORM CLI (`migration:generate`); the apps build theirs through DatabaseModule. */
export default new DataSource(dataSourceOptions(AppConfig.fromEnv(), 'typeorm-cli', ENTITIES));
