export * from './app-config';
export * from './config-error';
export * from './config.module';
export * from './env.schema';
export * from './env-file';
export * from './cidr';
