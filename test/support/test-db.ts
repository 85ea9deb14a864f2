// The typed door to server-state.js, which the container tests (plain node) share.
const shared = require('./server-state') as {
  withDatabase: (url: string, database: string) => string;
  recreateDatabase: (serverUrl: string, name: string) => Promise<void>;
  dropDatabase: (serverUrl: string, name: string) => Promise<void>;
  deleteRedisPrefix: (redisUrl: string, prefix: string) => Promise<void>;
};

export const { withDatabase, recreateDatabase, dropDatabase, deleteRedisPrefix } = shared;
