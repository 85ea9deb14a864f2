/** The scim feature's worker edge: its maintenance jobs, for the app that composes it. */
export * from './scim-maintenance';
export * from './scim-worker.module';
