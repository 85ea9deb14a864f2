import 'reflect-metadata';
import { AppConfig } from '@app/config';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';

/** For the TypeORM CLI (`migration:generate`); the apps build theirs through DatabaseModule. */
export default new DataSource(dataSourceOptions(AppConfig.fromEnv(), 'typeorm-cli'));
