// The api as the GET /v1/me benches run it (me.bench.js, compare-builds.js): NODE_ENV=production,
// the machine's Postgres (BENCH_DATABASE_URL) and Redis (BENCH_REDIS_URL, prefix iabench), rate
// limits out of reach, its stdout to a file (as a container runtime takes it, never through the
// load generator), and the tenant whose key the load sends.
'use strict';
const path = require('node:path');
const h = require('./harness');

const work = h.workDir('bench');
const settings = {
  node_env: 'production',
  database_url: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench',
  redis_url: h.redisUrl(),
  redis_prefix: 'iabench',
};

/** The api's environment at `logLevel`, its key cache kept `authCacheTtl` s. */
const meEnv = ({ logLevel, authCacheTtl = 60 }, extra = {}) =>
  h.appEnv({ ...settings, log_level: logLevel }, { dataDir: work }, { AUTH_CACHE_TTL_SECONDS: String(authCacheTtl), ...h.UNLIMITED, ...extra });

/** Migrates the database with `dist`'s admin CLI and makes a fresh organisation, connection (all scopes) and key. */
const meTenant = (dist, org) => h.makeTenant((args) => h.admin(args, { dist, env: meEnv({ logLevel: 'info' }) }), { org });

/** The api of `dist` at `logLevel` with the certificate `tls`, its stdout to `logFile` under .data/bench: {proc, port, log}. */
async function startMeApi(name, { dist, logLevel, authCacheTtl, tls, logFile }) {
  const log = path.join(work, logFile);
  const api = await h.startApi(name, { dist, env: meEnv({ logLevel, authCacheTtl }, { ...tls, METRICS_PORT: '0' }), stdoutFile: log });
  return { ...api, log };
}

module.exports = { meEnv, meTenant, settings, startMeApi, work };
