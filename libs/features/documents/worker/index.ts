/** The documents feature's worker edge: processors, producers and loops, for the app that composes it. */
export * from './documents-worker.module';
export * from './translation.processor';
