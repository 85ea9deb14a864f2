// A test run's own share of the machine's servers: a database of its own on Postgres and a key
// prefix of its own on Redis, made and dropped here. Plain JS, so that the container tests (run by
// node, outside jest) and jest's setup and teardown (through test-db.ts) share one copy.
'use strict';
const { Client } = require('pg');
const Redis = require('ioredis');

/** The server URL with another database name. */
function withDatabase(url, database) {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Runs `statements` one after another on the server's `postgres` database. */
async function onServer(serverUrl, statements) {
  const admin = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
  await admin.connect();
  try {
    for (const statement of statements) await admin.query(statement);
  } finally {
    await admin.end();
  }
}

/** Drops the database (sessions still on it are ended) and makes it again, empty. */
const recreateDatabase = (serverUrl, name) => onServer(serverUrl, [`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`, `CREATE DATABASE "${name}"`]);

/** Drops the database if it is there, ending the sessions still on it. */
const dropDatabase = (serverUrl, name) => onServer(serverUrl, [`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`]);

/** Deletes every key under the prefix: the run's own, and BullMQ's under the hash-tagged form ({prefix}:bull). */
async function deleteRedisPrefix(redisUrl, prefix) {
  const redis = new Redis(redisUrl, { lazyConnect: true });
  try {
    await redis.connect();
    for (const pattern of [`${prefix}:*`, `{${prefix}}:*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}

/** Drops a run's own database and deletes its Redis keys. */
async function dropServerState({ serverUrl, database, redisUrl, prefix }) {
  await dropDatabase(serverUrl, database);
  await deleteRedisPrefix(redisUrl, prefix);
}

module.exports = { withDatabase, recreateDatabase, dropDatabase, deleteRedisPrefix, dropServerState };
