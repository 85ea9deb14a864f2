/**
 * People and their invitations (REST /v1/users and /v1/invitations, the invitation page, the CLI);
 * SCIM adds people through these services. The only door to this feature from outside it.
 */
export * from './accounts';
export * from './group-assignment';
export * from './invitation.entity';
export * from './invitations.service';
export * from './people-adder';
export * from './people.module';
export * from './people.service';
export * from './person.entity';
