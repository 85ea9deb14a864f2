/** The connections feature's admin commands, for the app that composes it. */
export * from './connection.command';
export * from './key.command';
