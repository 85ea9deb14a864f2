// What a bench sets up before it measures: its dedicated database and Redis prefix, the
// environment of the apps it starts, a certificate, free ports.
'use strict';
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

/** The Postgres server the benches make their databases on (BENCH_DATABASE_SERVER_URL). */
const databaseServer = () => process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** The Redis the benches use (BENCH_REDIS_URL), each under a prefix of its own. */
const redisUrl = () => process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

/** `url` (a Postgres URL) pointing at database `name` instead. */
const withDb = (url, name) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

/** The URL of the dedicated database `name` on the benches' server. */
const databaseUrl = (name) => withDb(databaseServer(), name);

/** Drops and recreates the database of `url` (a dedicated one: it holds nothing but benchmark rows). */
async function recreateDatabase(url) {
  const name = new URL(url).pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const { Client } = require('pg');
  const pg = new Client({ connectionString: withDb(url, 'postgres') });
  await pg.connect();
  try {
    await pg.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await pg.query(`CREATE DATABASE ${name}`);
  } finally {
    await pg.end();
  }
}

/** Deletes every key under `prefix` (queues, slots, buckets) through `redis` (an ioredis client). */
async function clearRedisPrefix(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Rate-limit buckets no bench load can empty: a bench measures the rate limit's cost (a Redis script call per busy bucket per turn), never its 429s. */
const UNLIMITED = {
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '10000000',
  SCIM_RATE_LIMIT_PER_SECOND: '1000000',
  SCIM_RATE_LIMIT_BURST: '10000000',
};

/**
 * The environment of an api, worker or admin CLI the bench starts: `s` gives its node_env, log_level,
 * database_url, redis_url and redis_prefix; `dataDir` its DATA_DIR; `extra` is laid over it. It
 * inherits this process's environment, or only PATH with `clean`.
 */
function appEnv(s, { dataDir, clean = false } = {}, extra = {}) {
  return {
    ...(clean ? { PATH: process.env.PATH } : process.env),
    NODE_ENV: s.node_env,
    LOG_LEVEL: s.log_level,
    HOST: '127.0.0.1',
    DATABASE_URL: s.database_url,
    REDIS_URL: s.redis_url,
    REDIS_PREFIX: s.redis_prefix,
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
    ...extra,
  };
}

/** A list cursor as the api of `dist` issues it (signed with the installation's cursor secret, read through `db`, a pg client) for the row {created_at, id}. */
async function signedCursor(dist, db, row) {
  const { encodeCursor, CURSOR_SECRET_NAME } = require('./built').built(dist);
  const [{ secret }] = (await db.query(`SELECT secret FROM server_secrets WHERE name = $1`, [CURSOR_SECRET_NAME])).rows;
  return encodeCursor({ createdAt: new Date(row.created_at), id: String(row.id).trim() }, secret);
}

/** A self-signed certificate for localhost and `host` under `dir/tls`, made once (as the api's own); as TLS_* settings. */
async function ensureCert(dir, host = '127.0.0.1') {
  const cert = path.join(dir, 'tls', 'localhost.crt');
  const key = path.join(dir, 'tls', 'localhost.key');
  if (!fs.existsSync(cert) || !fs.existsSync(key)) {
    const pems = await require('selfsigned').generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: host },
          ],
        },
      ],
    });
    fs.mkdirSync(path.dirname(cert), { recursive: true });
    fs.writeFileSync(cert, pems.cert);
    fs.writeFileSync(key, pems.private, { mode: 0o600 });
  }
  return { TLS_CERT_FILE: cert, TLS_KEY_FILE: key };
}

/** A TCP port that is free on `host` right now. */
function freePort(host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, host, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

module.exports = { UNLIMITED, appEnv, clearRedisPrefix, databaseServer, databaseUrl, ensureCert, freePort, recreateDatabase, redisUrl, signedCursor, withDb };
