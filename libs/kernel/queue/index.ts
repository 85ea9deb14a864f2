export * from './queue.module';
export * from './queues';
export * from './schedules';
export * from './bull-errors';
