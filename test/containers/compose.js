#!/usr/bin/env node
// The compose files, run: the commands docs/operations/deploying.md gives, each with
// `docker compose` played by Debian's podman-compose (1.0.3), in a project of this run's own
// (`-p`), on the image scripts/image.sh built and the local Postgres and Redis images of
// `scripts/image.sh --servers` (POSTGRES_IMAGE, REDIS_IMAGE: no registry is reachable here).
// The published ports move to free ones (POSTGRES_PORT, REDIS_PORT, API_PORTS): this machine's own
// servers hold 5432 and 6379. Run by .ci/run after the other container tests:
//   scripts/image.sh && scripts/image.sh --servers && node test/containers/compose.js
// Checks: every command run is written in the manual; `up -d` brings up postgres, redis, the
// migration (exits 0, waiting for Postgres itself, as podman-compose starts everything at once),
// the api and the worker; every service's own healthcheck command answers healthy; api and worker
// run as uid 1000; a key made with the manual's `exec` line answers GET /v1/me over the published
// HTTPS port; `down` then `up -d` keeps the data (the migration applies nothing, the key still
// works); the replicas override runs two api and two worker replicas, each healthy with its
// settings, each api answering on a port of its own; `up -d postgres
// redis` starts only the servers, reachable on their published ports; `down -v` leaves no
// container, volume or network behind. Skips (exit 0, saying why) only when podman cannot run.
'use strict';
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const Redis = require('ioredis');
const p = require('./podman');

const MANUAL = 'docs/operations/deploying.md';
const SERVERS_TAG = process.env.SERVERS_TAG || 'bookworm';
const POSTGRES_IMAGE = `localhost/integrations-postgres:${SERVERS_TAG}`;
const REDIS_IMAGE = `localhost/integrations-redis:${SERVERS_TAG}`;
const PROJECT = `ctcompose${process.pid}`;

// The manual's lines, run as written (with `docker compose` → `podman-compose -p <project>`).
const BASE = 'docker compose -f docker/docker-compose.yml';
const UP = `${BASE} up -d`;
const EXEC_DEMO = `${BASE} exec -T api /app/docker/entrypoint.sh admin demo setup`;
const SERVERS_ONLY = `${BASE} up -d postgres redis`;
const REPLICAS = 'API_PORTS=127.0.0.1: docker compose -f docker/docker-compose.yml -f docker/docker-compose.replicas.yml up -d';
const REPLICAS_DOWN = 'docker compose -f docker/docker-compose.yml -f docker/docker-compose.replicas.yml down';
const DOWN = `${BASE} down`;
const DOWN_VOLUMES = `${BASE} down -v`;

const { check, say, passed } = p.checks();

/**
 * Runs one of the manual's compose lines: leading VAR=value words join the environment, then
 * `docker compose` is podman-compose with this run's project. Resolves {code, stdout, stderr}.
 */
function compose(line, env, { extraArgs = [], replaceEnv = {} } = {}) {
  const words = line.split(' ');
  const lineEnv = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift().split(/=(.*)/s);
    lineEnv[name] = value;
  }
  if (words[0] !== 'docker' || words[1] !== 'compose') throw new Error(`not a compose line: ${line}`);
  const args = ['-p', PROJECT, ...words.slice(2), ...extraArgs];
  return new Promise((resolve) => {
    execFile(
      'podman-compose',
      args,
      { cwd: p.root, env: { ...process.env, ...env, ...lineEnv, ...replaceEnv }, timeout: 600_000, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

async function composeOk(line, env, opts) {
  const r = await compose(line, env, opts);
  if (r.code !== 0) throw new Error(`${line} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r;
}

/** This project's containers: name → {service, state, exitCode}. */
async function containers() {
  const out = await p.podmanOk(['ps', '-a', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', 'json']);
  const list = JSON.parse(out.trim() || '[]');
  return new Map(list.map((c) => [c.Names[0], { service: c.Labels['com.docker.compose.service'], state: c.State, exitCode: c.ExitCode }]));
}

const name = (service) => `${PROJECT}_${service}_1`;

async function removeEverything() {
  const ids = await p.podman(['ps', '-aq', '--filter', `label=io.podman.compose.project=${PROJECT}`]);
  for (const id of ids.stdout.split('\n').filter(Boolean)) await p.podman(['rm', '-f', '-t', '0', id]);
  const volumes = await p.podman(['volume', 'ls', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`]);
  for (const v of volumes.stdout.split('\n').filter(Boolean)) await p.podman(['volume', 'rm', '-f', v]);
  await p.podman(['network', 'rm', '-f', `${PROJECT}_default`]);
}

async function main() {
  const unusable = await p.podmanUnusable();
  if (unusable) {
    process.stdout.write(`compose test SKIPPED: podman cannot run here (${unusable})\n`);
    return;
  }
  for (const image of [p.IMAGE, POSTGRES_IMAGE, REDIS_IMAGE]) {
    if ((await p.podman(['image', 'exists', image])).code !== 0) {
      throw new Error(`no image ${image}: build them first with scripts/image.sh and scripts/image.sh --servers`);
    }
  }
  const started = Date.now();
  const manual = fs.readFileSync(path.join(p.root, MANUAL), 'utf8');
  for (const line of [UP, EXEC_DEMO, SERVERS_ONLY, REPLICAS, REPLICAS_DOWN, DOWN, DOWN_VOLUMES]) {
    check(manual.includes(line), `${MANUAL} gives \`${line}\``);
  }
  const apiPort = await p.freePort();
  const env = {
    POSTGRES_IMAGE,
    REDIS_IMAGE,
    POSTGRES_PORT: String(await p.freePort()),
    REDIS_PORT: String(await p.freePort()),
    API_PORTS: `127.0.0.1:${apiPort}`,
    PUBLIC_BASE_URL: `https://localhost:${apiPort}`,
  };

  say(`podman-compose: ${UP}`);
  await composeOk(UP, env);
  await p.until(180, 'the migrate service exits', async () => (await containers()).get(name('migrate'))?.state === 'exited');
  const migrate = await p.state(name('migrate'));
  check(migrate.ExitCode === 0, 'the migrate service exits 0', await p.logs(name('migrate')));
  check(/applied: Foundation/.test(await p.logs(name('migrate'))), 'it applied the migrations to the fresh database');
  for (const service of ['postgres', 'redis', 'api', 'worker']) {
    await p.until(120, `${service}: its healthcheck, as the compose file writes it, answers healthy`, async () => {
      const s = await p.state(name(service));
      if (!s.Running) throw Object.assign(new Error(`${service} is not running (exit ${s.ExitCode}):\n${await p.logs(name(service))}`), { fatal: true });
      return (await p.podman(['healthcheck', 'run', name(service)])).code === 0;
    });
    check(true, `${service}: its healthcheck, as the compose file writes it, answers healthy`);
  }
  for (const service of ['api', 'worker']) {
    const pid = await p.nodePid(name(service));
    const uid = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)[1];
    check(uid === '1000', `${service}: node runs as uid 1000`, uid);
  }

  const made = await compose(EXEC_DEMO, env, { extraArgs: ['--json'] });
  check(made.code === 0, `\`${EXEC_DEMO}\` makes an organisation and a key`, made);
  // podman-compose prints the podman command it runs, and its exit code, around the command's output.
  let tenant;
  try {
    tenant = JSON.parse(/^\{.*\}$/m.exec(made.stdout)[0]);
  } catch {
    check(false, 'the demo set-up prints one JSON object', made.stdout);
  }
  check(typeof tenant.key === 'string' && typeof tenant.connection_id === 'string', 'it prints the key and the connection', tenant);
  // The api's certificate is the self-signed one it made under DATA_DIR/tls (NODE_ENV development).
  const me = await callInsecure(apiPort, '/v1/me', tenant.key);
  check(me.status === 200 && me.body.data.id === tenant.connection_id, `GET /v1/me answers 200 on the published port (API_PORTS) with that key`, me);

  say(`podman-compose: ${DOWN}, then ${UP}: the volumes keep the data`);
  await composeOk(DOWN, env);
  check((await containers()).size === 0, '`down` removes every container of the project');
  await composeOk(UP, env);
  await p.until(180, 'the migrate service exits again', async () => (await containers()).get(name('migrate'))?.state === 'exited');
  const again = await p.state(name('migrate'));
  const againLogs = await p.logs(name('migrate'));
  check(again.ExitCode === 0 && /nothing to apply/.test(againLogs), 'the second migration applies nothing', againLogs);
  await p.until(120, 'the api answers again', async () => (await callInsecure(apiPort, '/health/ready')).status === 200);
  const meAgain = await callInsecure(apiPort, '/v1/me', tenant.key);
  check(meAgain.status === 200, 'the key made before `down` still answers 200 (Postgres kept its volume)', meAgain);

  say(`podman-compose: ${DOWN}, then ${REPLICAS}`);
  await composeOk(DOWN, env);
  const replicas = await compose(REPLICAS, env);
  check(replicas.code === 0 && !/Error|Traceback/.test(replicas.stderr), 'the replicas override comes up without an error', replicas);
  for (const service of ['api', 'worker']) {
    for (const index of [1, 2]) {
      const container = `${PROJECT}_${service}_${index}`;
      await p.until(120, `${container}: healthy`, async () => {
        const s = await p.state(container);
        if (!s.Running) throw Object.assign(new Error(`${container} is not running (exit ${s.ExitCode}):\n${await p.logs(container)}`), { fatal: true });
        return (await p.podman(['healthcheck', 'run', container])).code === 0;
      });
      const inspected = JSON.parse(await p.podmanOk(['inspect', '--format', '{{json .Config.Env}}', container]));
      check(
        inspected.includes('REDIS_PREFIX=ia') && inspected.includes('MIGRATIONS_RUN_ON_START=false'),
        `${service} replica ${index}: healthy, with the override's REDIS_PREFIX and MIGRATIONS_RUN_ON_START`,
        inspected,
      );
    }
  }
  const ports = [];
  for (const index of [1, 2]) {
    const out = await p.podmanOk(['port', `${PROJECT}_api_${index}`, '8443/tcp']);
    const port = Number(/^127\.0\.0\.1:(\d+)$/m.exec(out.trim())?.[1]);
    ports.push(port);
    const answer = await callInsecure(port, '/v1/me', tenant.key);
    check(answer.status === 200, `api replica ${index}: GET /v1/me answers 200 on its own port of 127.0.0.1 (API_PORTS=127.0.0.1:)`, { out, answer });
  }
  check(ports[0] !== ports[1], 'the two api replicas publish different ports', ports);
  await composeOk(REPLICAS_DOWN, env);
  check((await containers()).size === 0, '`down` with both files removes every replica');

  say(`podman-compose: ${DOWN_VOLUMES}, then ${SERVERS_ONLY}`);
  await composeOk(DOWN_VOLUMES, env);
  check((await containers()).size === 0, '`down -v` removes every container');
  const volumes = await p.podmanOk(['volume', 'ls', '-q', '--filter', `label=io.podman.compose.project=${PROJECT}`]);
  check(volumes.trim() === '', '`down -v` removes the volumes', volumes);
  await composeOk(SERVERS_ONLY, env);
  const only = await containers();
  check(
    [...only.values()]
      .map((c) => c.service)
      .sort()
      .join(',') === 'postgres,redis',
    '`up -d postgres redis` starts only the servers',
    [...only.keys()],
  );
  const pgUrl = `postgres://integrations:integrations@127.0.0.1:${env.POSTGRES_PORT}/integrations`;
  await p.until(120, 'Postgres answers on its published port', async () => {
    const c = new Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
    c.on('error', () => undefined);
    try {
      await c.connect();
      return (await c.query('SELECT 1 AS one')).rows[0].one === 1;
    } finally {
      await c.end().catch(() => undefined);
    }
  });
  check(true, `Postgres answers on 127.0.0.1:POSTGRES_PORT as the manual's DATABASE_URL says (user and database integrations)`);
  const redis = new Redis(`redis://127.0.0.1:${env.REDIS_PORT}`, { lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  await p.until(60, 'Redis answers on its published port', async () => {
    if (redis.status !== 'ready') await redis.connect().catch(() => undefined);
    return (await redis.ping()) === 'PONG';
  });
  const policy = await redis.config('GET', 'maxmemory-policy');
  redis.disconnect();
  check(policy[1] === 'noeviction', 'Redis answers on 127.0.0.1:REDIS_PORT, with the noeviction policy BullMQ needs', policy);

  await composeOk(DOWN_VOLUMES, env);
  const left = await containers();
  check(left.size === 0, 'nothing of the project is left running', [...left.keys()]);
  process.stdout.write(`\ncompose test: ${passed()} checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** GET over the published port, the api's self-signed certificate not checked (curl -k). */
function callInsecure(port, pathname, key) {
  const https = require('node:https');
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        rejectUnauthorized: false,
        agent: false,
        timeout: 15_000,
        headers: key ? { authorization: `Bearer ${key}` } : {},
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode, body: /json/.test(String(res.headers['content-type'])) ? JSON.parse(text) : text });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on GET ${pathname}`)));
    req.on('error', reject);
  });
}

const run = { cleanup: removeEverything };
p.runMain(main, () => run);
