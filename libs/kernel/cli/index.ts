export * from './args';
export * from './command';
export * from './output';
