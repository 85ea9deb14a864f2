/**
 * Groups and the permission codes they hold, with the last-people-manager rule (REST /v1/groups,
 * /v1/permissions, the CLI). The only door to this feature from outside it.
 */
export * from './group.entity';
export * from './groups.module';
export * from './groups.service';
export * from './model/groups.errors';
export * from './people-managers.service';
export * from './permission.entity';
export * from './permissions.service';
