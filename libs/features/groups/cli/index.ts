/** The groups feature's admin commands, for the app that composes it. */
export * from './group.command';
