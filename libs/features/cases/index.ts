/**
 * Cases: one per external reference, opened and closed by partners (REST /v1/cases, the admin
 * CLI). The only door to this feature from outside it.
 */
export * from './case.entity';
export * from './cases.module';
export * from './cases.service';
