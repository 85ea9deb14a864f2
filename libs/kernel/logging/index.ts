export * from './logging.module';
export * from './shutdown';
export * from './request-log';
export * from './log-destination';
