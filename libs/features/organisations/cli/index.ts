/** The organisations feature's admin commands, for the app that composes it. */
export * from './domain.command';
export * from './org.command';
export * from './policy.command';
