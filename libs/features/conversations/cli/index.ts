/** The conversations feature's admin commands, for the app that composes it. */
export * from './conversation.command';
