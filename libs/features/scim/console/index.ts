/** The SCIM feature's pages of the Integrations section, for the app that composes it. */
export * from './scim-console.module';
