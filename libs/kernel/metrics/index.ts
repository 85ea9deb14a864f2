export * from './catalogue';
export * from './metrics';
export * from './metrics.module';
export * from './metrics-endpoint';
