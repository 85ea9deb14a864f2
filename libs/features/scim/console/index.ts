/** The scim feature's pages of the Integrations section, for the app that composes it. */
export * from './provisioning-log-console.module';
