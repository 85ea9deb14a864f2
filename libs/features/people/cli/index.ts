/** The people feature's admin commands, for the app that composes it. */
export * from './invitation.command';
export * from './person.command';
