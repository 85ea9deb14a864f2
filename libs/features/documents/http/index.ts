/** The documents feature's REST edge (and the other HTTP answers it serves), for the app that composes it. */
export * from './document-json-limit';
export * from './documents-http.module';
