/** The cases feature's admin commands, for the app that composes it. */
export * from './case.command';
