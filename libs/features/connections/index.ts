/**
 * Connections and their keys: a partner system's scopes, the keys it calls with (ApiKeysService is
 * the api's key lookup), /v1/me, the connection pages of the Integrations section and the CLI's
 * connection and key commands. The only door to this feature from outside it.
 */
export * from './api-key.entity';
export * from './api-keys.service';
export * from './connection.entity';
export * from './connections.module';
export * from './connections.service';
