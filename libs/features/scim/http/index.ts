/** The scim feature's REST edge (and the other HTTP answers it serves), for the app that composes it. */
export * from './scim-errors';
export * from './scim-http.module';
export * from './scim-openapi';
