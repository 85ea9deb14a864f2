export * from './data-source-options';
export * from './database.module';
export * from './migrate';
export * from './migrations';
export * from './prepared-statements';
export * from './notified-loop';
