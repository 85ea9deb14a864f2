/** The people feature's REST edge (and the other HTTP answers it serves), for the app that composes it. */
export * from './invitation-page.module';
export * from './people-http.module';
