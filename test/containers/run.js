#!/usr/bin/env node
// The container test: the image built by scripts/image.sh, run with podman as an operator runs it,
// against this machine's Postgres and Redis (a database and a Redis prefix of its own). Run outside
// jest, after `npm test`, by .ci/run:
//   scripts/image.sh && node test/containers/run.js
// Checks, in order: a configuration error is one clear message; the migrate step as its own
// container (twice: the second applies nothing); an api and a worker, non-root, read-only root
// filesystem, writable only at DATA_DIR; their health probes; GET /v1/me with a key made by the admin
// CLI inside the api container; an event made through the api delivered, signed, by the worker
// container to a TLS receiver on this machine; a second api and worker joining (the replicas
// override's settings: one REDIS_PREFIX, no migrations on start) with the same checks; then
// `podman stop` of each while work is in flight: the api answers its in-flight request and exits 0
// within its grace, the workers hand back or finish their deliveries and every one arrives once.
// Skips (exit 0, saying why) only when podman cannot run at all.
'use strict';
const crypto = require('node:crypto');
const https = require('node:https');
const { Client } = require('pg');
const p = require('./podman');

const SERVER_URL = process.env.TEST_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const DATABASE = `integrations_containers_${process.pid}`;
const PREFIX = `iacontainers${process.pid}`;
/** The stop grace both processes get (SHUTDOWN_GRACE_MS); `podman stop` waits longer before SIGKILL. */
const GRACE_MS = 10_000;
/** Events in the stop check, each answered by the receiver after SLOW_MS. */
const BURST = 40;
const SLOW_MS = 800;

const { withDatabase } = p;
const rand = () => crypto.randomBytes(4).toString('hex');
let run;
const { check, say, passed } = p.checks();

async function main() {
  const unusable = await p.podmanUnusable();
  if (unusable) {
    process.stdout.write(`container test SKIPPED: podman cannot run here (${unusable})\n`);
    return;
  }
  if ((await p.podman(['image', 'exists', p.IMAGE])).code !== 0) throw new Error(`no image ${p.IMAGE}: build it first with scripts/image.sh`);
  await p.removeOrphans();
  const started = Date.now();
  run = new p.Run('ct');

  // ---- the machine's servers: a database and a Redis prefix of this run's own ----
  await p.dropDatabase(SERVER_URL, DATABASE);
  const cleanupServers = () => p.dropServerState({ serverUrl: SERVER_URL, database: DATABASE, redisUrl: REDIS_URL, prefix: PREFIX });
  const runCleanup = run.cleanup.bind(run);
  run.cleanup = async () => {
    await runCleanup();
    await cleanupServers().catch((err) => process.stderr.write(`cleanup of ${DATABASE} / ${PREFIX}: ${err.message}\n`));
  };

  // ---- certificates: the api's (mounted read-only as an operator mounts a secret), the receiver's ----
  const apiTls = await p.selfSigned('integrations-api.test');
  const receiverTls = await p.selfSigned('hooks.integrations.test');
  run.file('tls.crt', apiTls.cert);
  run.file('tls.key', apiTls.key);
  run.file('receiver-ca.crt', receiverTls.cert);
  const secrets = ['-v', `${run.dir}:/run/secrets/integrations:ro`];
  const receiver = await p.startReceiver(receiverTls);

  const db = new Client({ connectionString: withDatabase(SERVER_URL, DATABASE) });
  // Dropped WITH (FORCE) on the way out, perhaps while still connected.
  db.on('error', () => undefined);
  const common = {
    DATABASE_URL: withDatabase(SERVER_URL, DATABASE),
    REDIS_URL,
    REDIS_PREFIX: PREFIX,
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_MS: String(GRACE_MS),
    MIGRATIONS_RUN_ON_START: 'false',
    // The receiver is on this machine's loopback: webhooks may be made (api) and sent (worker) there.
    WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
  };
  const apiEnv = (port, metricsPort) => ({
    ...common,
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
    HOST: '127.0.0.1',
    TLS_CERT_FILE: '/run/secrets/integrations/tls.crt',
    TLS_KEY_FILE: '/run/secrets/integrations/tls.key',
    PUBLIC_BASE_URL: `https://127.0.0.1:${port}`,
  });
  const workerEnv = (port) => ({
    ...common,
    WORKER_HEALTH_PORT: String(port),
    METRICS_HOST: '127.0.0.1',
    WEBHOOK_CONCURRENCY: '5',
    // The receiver's certificate, trusted as an operator trusts an internal CA.
    NODE_EXTRA_CA_CERTS: '/run/secrets/integrations/receiver-ca.crt',
  });
  const api = (port, extra = {}) => p.call({ port, ca: apiTls.cert, ...extra });

  // ---- 1. a configuration error at start-up: the message, no stack trace ----
  say('a configuration error is one message');
  const refused = await p.podman(['run', '--rm', '--network=host', '-e', `DATABASE_URL=${common.DATABASE_URL}`, p.IMAGE, 'api']);
  check(refused.code === 1, 'the api without TLS_CERT_FILE/TLS_KEY_FILE in production exits 1', refused);
  check(
    /TLS_CERT_FILE and TLS_KEY_FILE: are required in production/.test(refused.stderr) && !/\n\s+at /.test(refused.stderr),
    'it prints the setting and why, without a stack trace',
    refused.stderr,
  );

  const secretLeft = await p.podman([
    'run',
    '--rm',
    '--network=host',
    '--entrypoint',
    'sh',
    p.IMAGE,
    '-c',
    'ls /run/secrets 2>/dev/null; grep -rl "NODE_EXTRA_CA_CERTS=/run/secrets" /usr/local/etc/npmrc /root/.npmrc /app/.npmrc 2>/dev/null; true',
  ]);
  check(secretLeft.code === 0 && secretLeft.stdout.trim() === '', 'the build secret (an extra CA for npm) is not in the image', secretLeft);

  // ---- 2. migrate: its own container, exit 0; again: nothing to apply ----
  say('migrate');
  const first = await run.once('migrate-1', ['migrate', '--json'], common);
  check(first.code === 0, 'the migrate container exits 0', first);
  const applied = JSON.parse(first.stdout).applied;
  check(applied.length > 0, `it applies every migration (${applied.length})`, first.stdout);
  await db.connect();
  const rows = async () => (await db.query('SELECT name FROM typeorm_migrations ORDER BY id')).rows.map((r) => r.name);
  const names = await rows();
  check(JSON.stringify(names) === JSON.stringify(applied), 'the database holds exactly those migrations', { names, applied });
  const second = await run.once('migrate-2', ['migrate'], common);
  check(second.code === 0 && /nothing to apply/.test(second.stdout), 'a second migrate container exits 0 and applies nothing', second);
  check(JSON.stringify(await rows()) === JSON.stringify(names), 'the migrations table is unchanged by it');

  // ---- 3. one api and one worker ----
  say('one api and one worker');
  const [apiPort1, apiPort2, healthPort1, healthPort2, metricsPort1, metricsPort2] = await Promise.all([1, 2, 3, 4, 5, 6].map(() => p.freePort()));
  const t0 = Date.now();
  const api1 = await run.start('api-1', ['api'], apiEnv(apiPort1, metricsPort1), secrets);
  const worker1 = await run.start('worker-1', ['worker'], workerEnv(healthPort1), secrets);
  await checkReady(api, apiPort1, healthPort1, api1, worker1);
  process.stdout.write(`  (both ready ${((Date.now() - t0) / 1000).toFixed(1)} s after the first podman run)\n`);
  for (const name of [api1, worker1]) await checkConfined(name);

  await checkMetrics(metricsPort1, healthPort1);

  const tenant = await adminJson(api1, ['demo', 'setup', '--name', `Containers ${rand()}`]);
  check(/^svc_[0-9a-f]{64}$/.test(tenant.key), 'the admin CLI inside the api container (podman exec) makes a key');
  const me = await api(apiPort1, { path: '/v1/me', key: tenant.key });
  check(me.status === 200 && me.body.data.id === tenant.connection_id, 'GET /v1/me answers 200 (the connection) over the api’s own HTTPS', me);
  await checkDelivery(api, apiPort1, api1, tenant, receiver, 'one worker');

  // ---- 4. a second api and a second worker join ----
  say('a second api and a second worker join (one REDIS_PREFIX, no migrations on start)');
  const api2 = await run.start('api-2', ['api'], apiEnv(apiPort2, metricsPort2), secrets);
  const worker2 = await run.start('worker-2', ['worker'], workerEnv(healthPort2), secrets);
  await checkReady(api, apiPort2, healthPort2, api2, worker2);
  for (const name of [api2, worker2]) await checkConfined(name);
  check(JSON.stringify(await rows()) === JSON.stringify(names), 'the joining replicas migrated nothing');
  const me2 = await api(apiPort2, { path: '/v1/me', key: tenant.key });
  check(me2.status === 200, 'the key made in the first api answers 200 on the second', me2);
  const key2 = await adminJson(api2, ['key', 'create', '--connection', tenant.connection_id]);
  for (const port of [apiPort1, apiPort2]) {
    const r = await api(port, { path: '/v1/me', key: key2.key });
    check(r.status === 200, `a key made by the admin CLI in the second api answers on port ${port === apiPort1 ? 'of api 1' : 'of api 2'}`, r);
  }
  await checkDelivery(api, apiPort2, api2, tenant, receiver, 'two workers');

  // ---- 5. podman stop while work is in flight ----
  say(`podman stop (SIGTERM) with work in flight: ${BURST} events answered after ${SLOW_MS} ms each`);
  const slowPath = `/containers-burst-${rand()}`;
  receiver.slow.set(slowPath, SLOW_MS);
  const hook = await api(apiPort1, {
    method: 'POST',
    path: '/v1/webhooks',
    key: tenant.key,
    json: { url: `https://127.0.0.1${slowPath}`, events: ['conversation.ended'] },
  });
  check(hook.status === 201, 'a webhook for the burst is made', hook);
  // The events, written as the outbox writer writes them (its INSERT; the trigger NOTIFYs the relays).
  await db.query(
    `INSERT INTO outbox_events (organisation_id, event, data)
     SELECT $1, 'conversation.ended', jsonb_build_object('conversation_id', md5($3 || i::text))
       FROM generate_series(1, $2::int) AS i`,
    [tenant.organisation_id, BURST, slowPath],
  );
  const receipts = () => receiver.received.filter((r) => r.path === slowPath);
  await p.until(120, 'deliveries in flight at the receiver', () => receiver.inFlight() >= 3);
  const w1Stop = await stopTimed(worker1);
  check(w1Stop.code === 0, `worker 1 exits 0 on SIGTERM with deliveries in flight (${w1Stop.ms} ms)`, w1Stop);
  check(w1Stop.ms < GRACE_MS, 'within its grace period', w1Stop);
  const w1Log = await p.logs(worker1);
  check(
    /SIGTERM: stopping the worker \(grace 10000 ms\)/.test(w1Log) && !/longer than \d+ ms: exiting anyway/.test(w1Log),
    'its log says SIGTERM started the stop, with no forced exit',
    w1Log.slice(-2000),
  );

  // The api: a request whose body is still arriving when SIGTERM comes is answered, then it exits 0.
  const inFlight = trickledPost(apiPort1, apiTls.cert, tenant.key, { url: `https://127.0.0.1/containers-drain-${rand()}`, events: ['conversation.ended'] });
  await inFlight.started;
  const a1Stop = stopTimed(api1);
  await sigtermSeen(api1, 'api');
  inFlight.finish();
  const drained = await inFlight.answer;
  check(drained.status === 201, 'api 1 answers the request in flight at SIGTERM (201)', drained);
  const a1 = await a1Stop;
  check(a1.code === 0 && a1.ms < GRACE_MS, `api 1 exits 0 within its grace period (${a1.ms} ms)`, a1);
  const after = await api(apiPort2, { path: '/v1/me', key: tenant.key });
  check(after.status === 200, 'api 2 still answers', after);

  await p.until(120, 'more deliveries in flight at worker 2', async () => receipts().length >= BURST / 2 && receiver.inFlight() >= 2);
  const w2Stop = await stopTimed(worker2);
  check(w2Stop.code === 0 && w2Stop.ms < GRACE_MS, `worker 2 exits 0 within its grace period with deliveries in flight (${w2Stop.ms} ms)`, w2Stop);
  const atStop = receipts().length;
  check(atStop < BURST, `deliveries were left when the last worker stopped (${atStop} of ${BURST} received)`);
  // Worker 1 again (the same container): it takes what was handed back.
  const t1 = Date.now();
  await p.podmanOk(['start', worker1]);
  await p.until(120, 'worker 1 ready again', async () => (await p.call({ port: healthPort1, tls: false, path: '/health/ready' })).status === 200);
  await p.until(180, `all ${BURST} deliveries received`, () => receipts().length >= BURST);
  process.stdout.write(`  (the rest delivered ${((Date.now() - t1) / 1000).toFixed(1)} s after worker 1 started again)\n`);
  await p.sleep(2000);
  const ids = receipts().map((r) => JSON.parse(r.raw).id);
  const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
  check(new Set(ids).size === BURST && twice.length === 0, `every delivery arrived exactly once (${ids.length} receipts, ${new Set(ids).size} deliveries)`, {
    twice,
  });
  const states = (
    await db.query(
      `SELECT d.state, count(*)::int AS n, max(a.n)::int AS most FROM webhook_deliveries d
        JOIN (SELECT delivery_id, count(*) AS n FROM webhook_delivery_attempts GROUP BY delivery_id) a ON a.delivery_id = d.id
       WHERE d.webhook_id = $1 GROUP BY d.state`,
      [hook.body.data.id],
    )
  ).rows;
  check(
    states.length === 1 && states[0].state === 'delivered' && states[0].n === BURST && states[0].most === 1,
    'Postgres holds each delivered, with one attempt',
    states,
  );

  // The second api stops the same way.
  const inFlight2 = trickledPost(apiPort2, apiTls.cert, tenant.key, { url: `https://127.0.0.1/containers-drain-${rand()}`, events: ['conversation.ended'] });
  await inFlight2.started;
  const a2Stop = stopTimed(api2);
  await sigtermSeen(api2, 'api');
  inFlight2.finish();
  const drained2 = await inFlight2.answer;
  const a2 = await a2Stop;
  check(drained2.status === 201 && a2.code === 0 && a2.ms < GRACE_MS, `api 2 answers its in-flight request and exits 0 within its grace (${a2.ms} ms)`, {
    drained2,
    a2,
  });
  const w1Again = await stopTimed(worker1);
  check(w1Again.code === 0, 'worker 1 stops again with exit code 0', w1Again);

  await db.end();
  await receiver.close();
  process.stdout.write(`\ncontainer test: ${passed()} checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** Both health probes answer 200: the api's over HTTPS, the worker's over plain HTTP. */
async function checkReady(api, apiPort, healthPort, apiName, workerName) {
  const alive = async (name) => {
    const s = await p.state(name);
    if (!s.Running) throw Object.assign(new Error(`${name} exited ${s.ExitCode}:\n${await p.logs(name)}`), { fatal: true });
  };
  await p.until(90, `${apiName} ready`, async () => {
    await alive(apiName);
    return (await api(apiPort, { path: '/health/ready' })).status === 200;
  });
  check(true, `${apiName}: GET /health/ready answers 200 over HTTPS`);
  check((await api(apiPort, { path: '/health/live' })).status === 200, `${apiName}: GET /health/live answers 200`);
  await p.until(90, `${workerName} ready`, async () => {
    await alive(workerName);
    return (await p.call({ port: healthPort, tls: false, path: '/health/ready' })).status === 200;
  });
  check(true, `${workerName}: GET /health/ready answers 200 on its health port`);
  check((await p.call({ port: healthPort, tls: false, path: '/health/live' })).status === 200, `${workerName}: GET /health/live answers 200`);
}

/**
 * The metrics override (docker/docker-compose.metrics.yml): its Prometheus configuration passes
 * promtool, scrapes the ports the compose file gives the api (METRICS_PORT) and the worker
 * (WORKER_HEALTH_PORT), and what the containers serve there passes `promtool check metrics`.
 */
async function checkMetrics(apiMetricsPort, workerHealthPort) {
  const { spawnSync } = require('node:child_process');
  const fs = require('node:fs');
  const path = require('node:path');
  const YAML = require('yaml');
  const promtool = (args, input) => spawnSync('/usr/bin/promtool', args, { input, encoding: 'utf8', timeout: 30_000 });
  const config = path.join(p.root, 'docker/prometheus/prometheus.yml');
  const checked = promtool(['check', 'config', config]);
  check(checked.status === 0, 'docker/prometheus/prometheus.yml passes promtool check config (its alert rules included)', `${checked.stdout}${checked.stderr}`);
  const compose = YAML.parse(fs.readFileSync(path.join(p.root, 'docker/docker-compose.yml'), 'utf8'));
  const targets = YAML.parse(fs.readFileSync(config, 'utf8')).scrape_configs.flatMap((j) => j.static_configs.flatMap((c) => c.targets));
  const want = [`api:${compose.services.api.environment.METRICS_PORT}`, `worker:${compose.services.worker.environment.WORKER_HEALTH_PORT}`];
  check(JSON.stringify(targets) === JSON.stringify(want), `it scrapes the compose file's ports (${want.join(', ')})`, targets);
  for (const [what, port] of [
    ['api (METRICS_PORT)', apiMetricsPort],
    ['worker (WORKER_HEALTH_PORT)', workerHealthPort],
  ]) {
    const res = await p.call({ port, tls: false, path: '/metrics' });
    const lint = promtool(['check', 'metrics'], res.body);
    check(res.status === 200 && lint.status === 0, `the ${what} container serves /metrics that pass promtool check metrics`, {
      status: res.status,
      lint: `${lint.stdout}${lint.stderr}`,
    });
  }
}

/** The container's node runs as uid 1000; its root filesystem is read-only; DATA_DIR is writable. */
async function checkConfined(name) {
  const pid = await p.nodePid(name);
  const uid = require('node:fs')
    .readFileSync(`/proc/${pid}/status`, 'utf8')
    .match(/^Uid:\s+(\d+)/m)[1];
  check(uid === '1000', `${name}: node runs as uid 1000 (not root)`, uid);
  const inspect = JSON.parse(await p.podmanOk(['inspect', '--format', '{{json .HostConfig.ReadonlyRootfs}}', name]));
  check(inspect === true, `${name}: the root filesystem is read-only`);
  const outside = await p.podman(['exec', name, 'sh', '-c', 'for f in /app/probe /etc/probe /probe; do touch "$f" 2>&1; done']);
  const refusals = outside.stdout.split('\n').filter((l) => /Read-only file system/.test(l));
  check(refusals.length === 3, `${name}: /app, /etc and / cannot be written`, outside);
  // DATA_DIR: the run's tmpfs (a volume in compose); /tmp: podman's tmpfs of a read-only container,
  // where the api spools uploads being received.
  const inside = await p.podman([
    'exec',
    name,
    'sh',
    '-c',
    'for d in "$DATA_DIR" /tmp; do touch "$d/probe" && rm "$d/probe" && echo "$d"; done; grep -E " (/app/.data|/tmp) " /proc/mounts',
  ]);
  check(inside.code === 0 && /^\/app\/\.data\n\/tmp\n/.test(inside.stdout), `${name}: DATA_DIR (/app/.data) and /tmp can be written`, inside);
  check((inside.stdout.match(/ tmpfs /g) || []).length === 2, `${name}: both are tmpfs mounts`, inside.stdout);
}

/** The admin CLI inside a running api container; its JSON answer. */
async function adminJson(container, args) {
  const r = await p.podman(['exec', container, '/app/docker/entrypoint.sh', 'admin', ...args, '--json']);
  if (r.code !== 0) throw new Error(`admin ${args.join(' ')} in ${container} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

/**
 * An event made through the api: a webhook for user.joined, a person invited with POST /v1/users,
 * the invitation accepted with the admin CLI. The worker delivers it, signed with the webhook's secret.
 */
async function checkDelivery(api, port, container, tenant, receiver, label) {
  const path = `/containers-${rand()}`;
  const hook = await api(port, { method: 'POST', path: '/v1/webhooks', key: tenant.key, json: { url: `https://127.0.0.1${path}`, events: ['user.joined'] } });
  check(hook.status === 201 && hook.body.data.secret, `(${label}) POST /v1/webhooks answers 201 with the secret`, hook);
  const invited = await api(port, { method: 'POST', path: '/v1/users', key: tenant.key, json: { email: `joiner-${rand()}@containers.example` } });
  check(invited.status === 202 && invited.body.status === 'invited', `(${label}) POST /v1/users invites a person (202)`, invited);
  const accepted = await adminJson(container, ['invitation', 'accept', invited.body.data.id, '--name', 'Joiner']);
  await p.until(60, `the user.joined delivery at ${path}`, () => receiver.received.some((r) => r.path === path));
  const got = receiver.received.filter((r) => r.path === path);
  const body = JSON.parse(got[0].raw);
  check(
    got.length === 1 && body.event === 'user.joined',
    `(${label}) the worker container delivers user.joined to the TLS receiver on this machine, once`,
    got,
  );
  check(body.data.user_id === accepted.person_id, `(${label}) for the person who joined`, { body, accepted });
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(got[0].headers['service-signature']));
  const expected = m && crypto.createHmac('sha256', hook.body.data.secret).update(`${m[1]}.${got[0].raw}`).digest('hex');
  check(
    m && crypto.timingSafeEqual(Buffer.from(m[2]), Buffer.from(expected)),
    `(${label}) its Service-Signature verifies with the webhook's secret`,
    got[0].headers,
  );
}

/** Waits until the container's log says SIGTERM reached it: the stop has begun. */
async function sigtermSeen(name, what) {
  await p.until(60, `${name} to log the SIGTERM`, async () => new RegExp(`SIGTERM: stopping the ${what}`).test(await p.logs(name)));
}

/** `podman stop` (SIGTERM, SIGKILL only after 60 s): {code (the container's exit code), ms}. */
async function stopTimed(name) {
  const t = Date.now();
  await p.podmanOk(['stop', '-t', '60', name]);
  const ms = Date.now() - t;
  const s = await p.state(name);
  return { code: s.ExitCode, ms, oomKilled: s.OOMKilled };
}

/**
 * A POST whose headers and first half of the body are sent now and the rest on finish(): a request
 * in flight for as long as the caller likes. `started` settles once the api has read its headers
 * (it answers `Expect: 100-continue`) and the first half is sent.
 */
function trickledPost(port, ca, key, json) {
  const payload = Buffer.from(JSON.stringify(json));
  const half = Math.floor(payload.length / 2);
  let sent;
  const started = new Promise((r) => (sent = r));
  let req;
  const answer = new Promise((resolve, reject) => {
    req = https.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/webhooks',
        ca,
        agent: false,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': payload.length, expect: '100-continue' },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.on('continue', () => req.write(payload.subarray(0, half), () => sent()));
    req.flushHeaders();
  });
  return { started, answer, finish: () => req.end(payload.subarray(half)) };
}

p.runMain(main, () => run);
