/** The groups feature's REST edge (and the other HTTP answers it serves), for the app that composes it. */
export * from './groups-http.module';
