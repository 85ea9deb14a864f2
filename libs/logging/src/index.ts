export * from './logging.module';
export * from './shutdown';
export * from './request-log';
