/** The webhooks feature's admin commands, for the app that composes it. */
export * from './webhook.command';
export * from './listen.command';
