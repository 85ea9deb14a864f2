#!/usr/bin/env node
// The servers the end-to-end tests need, asked before anything slow runs (`npm test` starts with
// this, and test/support/global-setup.ts asks again for `npx jest` alone): a missing one is said
// within seconds, with how to start it, instead of an ECONNREFUSED after the build and type check.
'use strict';

const DEFAULT_DATABASE_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const TIMEOUT_MS = 3000;
const COMPOSE = 'docker compose -f docker/docker-compose.yml up -d';
const masked = (url) => url.replace(/:[^:@/]+@/, ':***@');

async function postgresProblem(url, cleanups) {
  const { Client } = require('pg');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: TIMEOUT_MS, query_timeout: TIMEOUT_MS });
  client.on('error', () => {});
  cleanups.push(() => client.connection?.stream?.destroy());
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (err) {
    return err?.message || String(err);
  } finally {
    client.end().catch(() => {});
  }
}

async function redisProblem(url, cleanups) {
  const Redis = require('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    commandTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  cleanups.push(() => redis.disconnect());
  let last = null;
  redis.on('error', (err) => (last = err.message));
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG' ? null : 'PING was not answered PONG';
  } catch (err) {
    return last || err?.message || String(err); // the socket's error says more than "Connection is closed."
  } finally {
    redis.disconnect();
  }
}

/** A server that accepts and then stays silent gets no longer than the others (a handshake has no timeout of its own). */
function bounded(check) {
  let timer;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, TIMEOUT_MS + 500, `no answer within ${TIMEOUT_MS / 1000} s`)));
  return Promise.race([check, late]).finally(() => clearTimeout(timer));
}

/** Both servers at once; null when both answer, else one message naming each missing one. */
async function testServicesProblem(env = process.env) {
  const db = env.TEST_DATABASE_SERVER_URL || DEFAULT_DATABASE_SERVER_URL;
  const redis = env.REDIS_URL || DEFAULT_REDIS_URL;
  const cleanups = []; // nothing may stay open: it would keep jest from exiting
  const [dbProblem, redisProblemText] = await Promise.all([bounded(postgresProblem(db, cleanups)), bounded(redisProblem(redis, cleanups))]);
  cleanups.forEach((close) => close());
  const parts = [];
  if (dbProblem) {
    parts.push(
      `- PostgreSQL at ${masked(db)} (TEST_DATABASE_SERVER_URL${env.TEST_DATABASE_SERVER_URL ? '' : ', unset: the default'}): ${dbProblem}\n` +
        '    start it:  pg_ctlcluster <version> main start   (Debian/Ubuntu; pg_lsclusters lists them)\n' +
        `    or:        ${COMPOSE} postgres   and set\n` +
        '               TEST_DATABASE_SERVER_URL=postgres://integrations:integrations@127.0.0.1:5432/postgres\n' +
        '    or set TEST_DATABASE_SERVER_URL to a server whose user may create databases',
    );
  }
  if (redisProblemText) {
    parts.push(
      `- Redis at ${masked(redis)} (REDIS_URL${env.REDIS_URL ? '' : ', unset: the default'}): ${redisProblemText}\n` +
        '    start it:  redis-server --daemonize yes   (apt-get install redis-server)\n' +
        `    or:        ${COMPOSE} redis\n` +
        '    or set REDIS_URL to a running Redis (each run uses its own key prefix)',
    );
  }
  return parts.length ? `The end-to-end tests need PostgreSQL and Redis; not answering:\n${parts.join('\n')}` : null;
}

/**
 * Programs the tests drive for real, from Debian packages: the browser the console's tests use,
 * the connection pooler, Redis Sentinel, promtool, the Apertium engine and LibreOffice. Missing ones are installed with apt-get when
 * this runs as root (a fresh CI machine); otherwise the message says which command installs them.
 */
const SYSTEM_PACKAGES = [
  { pkg: 'chromium', bin: '/usr/bin/chromium', for: 'the Integrations section tests (a real browser)' },
  { pkg: 'fonts-liberation', bin: '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf', for: 'readable text in the screenshots' },
  { pkg: 'pgbouncer', bin: '/usr/sbin/pgbouncer', for: 'the connection-pooler tests' },
  { pkg: 'redis-sentinel', bin: '/usr/bin/redis-sentinel', for: 'the Redis Sentinel tests' },
  { pkg: 'prometheus', bin: '/usr/bin/promtool', for: 'promtool, which checks the alert rules and the metrics text' },
  { pkg: 'apertium', bin: '/usr/bin/apertium', for: 'the real translation engine the document tests run' },
  { pkg: 'apertium-eng-spa', bin: '/usr/share/apertium/modes/eng-spa.mode', for: "Apertium's English-Spanish pair" },
  { pkg: 'libreoffice-writer-nogui', bin: '/usr/bin/soffice', for: 'LibreOffice, which opens the translated .docx the tests produce' },
];

function systemPackagesProblem() {
  const { existsSync } = require('node:fs');
  const { spawnSync } = require('node:child_process');
  const missing = SYSTEM_PACKAGES.filter((p) => !existsSync(p.bin));
  if (missing.length === 0) return null;
  const names = missing.map((p) => p.pkg).join(' ');
  const command = `apt-get update && apt-get install -y --no-install-recommends ${names}`;
  const canInstall = process.getuid?.() === 0 && spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status === 0;
  if (canInstall) {
    process.stdout.write(`Installing the Debian packages the tests need: ${names}\n`);
    const run = spawnSync('sh', ['-c', command], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    const still = missing.filter((p) => !existsSync(p.bin));
    if (run.status === 0 && still.length === 0) return null;
  }
  const lines = missing.map((p) => `- ${p.pkg} (${p.bin}): for ${p.for}`);
  return `The tests need these Debian packages:\n${lines.join('\n')}\n    install them:  ${command}   (as root)`;
}

module.exports = { testServicesProblem, systemPackagesProblem };

if (require.main === module) {
  const packages = systemPackagesProblem();
  testServicesProblem().then((problem) => {
    const all = [packages, problem].filter(Boolean);
    if (all.length) process.stderr.write(`${all.join('\n\n')}\n`);
    process.exit(all.length ? 1 : 0);
  });
}
