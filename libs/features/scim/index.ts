/**
 * SCIM 2.0 for Okta and Microsoft Entra ID: paths, filters, PATCH and schemas (model/), users and
 * groups over the people and groups features, the /scim/v2 edge and its error dialect. The only
 * door to this feature from outside it.
 */
export * from './model/provisioning-event';
export * from './model/scim-caller';
export * from './model/scim-discovery';
export * from './model/scim-error';
export * from './model/scim-filter';
export * from './model/scim-group-model';
export * from './model/scim-patch';
export * from './model/scim-path';
export * from './model/scim-projection';
export * from './model/scim-schemas';
export * from './model/scim-user-model';
export * from './scim-groups.repository';
export * from './scim-groups.service';
export * from './scim-membership';
export * from './scim-users.repository';
export * from './scim-users.service';
export * from './scim-walks';
export * from './scim.module';
export * from './provisioning-log.service';
