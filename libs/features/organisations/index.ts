/**
 * Organisations: the integrations module, the address allow-list, the data policy and its page,
 * verified mail domains, the CLI's org, domain and policy commands. The only door to this feature
 * from outside it.
 */
export * from './domains.service';
export * from './organisation-domain.entity';
export * from './organisation.entity';
export * from './organisations.module';
export * from './organisations.service';
export * from './policy-version.entity';
