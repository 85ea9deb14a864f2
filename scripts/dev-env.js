'use strict';
// What `npm run dev` reads, and from where. `.env` is loaded exactly as every process loads it
// (libs/kernel/config/env-file.ts: Node's own parser, the real environment wins, never under
// NODE_ENV=test); this twin is plain JS because dev runs before anything is built.
const fs = require('node:fs');
const path = require('node:path');
const { parseEnv } = require('node:util');

function loadEnvFile(file = '.env', nodeEnv = process.env.NODE_ENV) {
  if (nodeEnv === 'test' || !fs.existsSync(file)) return [];
  const parsed = parseEnv(fs.readFileSync(file, 'utf8'));
  const added = Object.keys(parsed).filter((name) => process.env[name] === undefined);
  for (const name of added) process.env[name] = parsed[name];
  return added;
}

const yes = (v) => ['1', 'true', 'yes', 'on'].includes(String(v ?? '').toLowerCase());

/**
 * The settings of one dev run, `.env` (of the working directory, as for the api) loaded first.
 * The DEV_* variables are read by dev alone: ports of the embedded Postgres and the project-local
 * redis-server, and DEV_EMBEDDED to start both without asking the default servers first.
 */
function devSettings(root) {
  const file = path.resolve('.env');
  const fromFile = loadEnvFile(file);
  const env = { ...process.env, NODE_ENV: process.env.NODE_ENV || 'development', LOG_LEVEL: process.env.LOG_LEVEL || 'info' };
  const int = (name, fallback) => (env[name] ? Number(env[name]) : fallback);
  return {
    env,
    port: int('PORT', 8443),
    workerPort: int('WORKER_HEALTH_PORT', 8081),
    // The api's Prometheus port (0: a free one) and whether metrics are on (as libs/config reads METRICS_ENABLED).
    metricsPort: int('METRICS_PORT', 9464),
    metricsEnabled: env.METRICS_ENABLED ? yes(env.METRICS_ENABLED) : true,
    dataDir: path.resolve(root, env.DATA_DIR || '.data'),
    postgresPort: int('DEV_POSTGRES_PORT', 54329),
    redisPort: int('DEV_REDIS_PORT', 6380),
    embedded: yes(env.DEV_EMBEDDED),
    /** Where a variable was set, for messages that tell how to unset it. */
    origin: (name) =>
      fromFile.includes(name) ? { where: `.env (${file})`, unset: `remove ${name} from ${file}` } : { where: 'the environment', unset: `unset ${name}` },
  };
}

module.exports = { devSettings, loadEnvFile };
