export * from './logging.module';
export * from './shutdown';
