#!/usr/bin/env node
// `npm run dev`: build, find (or start) Postgres and Redis, migrate, start the api and the worker,
// reuse or create the demo tenant, prove its key with one real call and print how to use it.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const readline = require('node:readline');
const { devSettings } = require('./dev-env');
const { devServices, DevError, portFree, masked } = require('./dev-services');
const { chooseDevTranslation } = require('./dev-translation');
const { allowLocalReceiver } = require('./dev-receiver');

const root = path.resolve(__dirname, '..');
const settings = devSettings(root);
const { env, port: PORT, workerPort: WORKER_PORT, metricsPort: METRICS_PORT, metricsEnabled: METRICS_ON, dataDir } = settings;
const demoFile = path.join(dataDir, 'demo.json');
const apps = []; // api and worker: stopped first
const services = []; // a project-local redis-server: stopped after the apps
let stopping = false;

const say = (msg) => process.stdout.write(`[dev] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const backing = devServices(settings, { say, startChild: (...args) => startChild(services, ...args) });

function build() {
  say('building (npm run build)…');
  const r = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new DevError('the build failed (see above)');
}

function admin(args) {
  const r = spawnSync(process.execPath, ['dist/apps/admin/src/main.js', ...args], {
    cwd: root,
    env: { ...env, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (r.status !== 0) throw new DevError(`admin ${args.join(' ')} failed (exit ${r.status})\n${r.stdout}`);
  const line = r.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  return line ? JSON.parse(line) : {};
}

function startChild(list, name, command, args = [], { detached = false } = {}) {
  const proc = spawn(command, args, { cwd: root, env, detached, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [proc.stdout, proc.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${name}] ${line}\n`));
  }
  proc.on('error', (err) => say(`${name} could not start: ${err.message}`));
  proc.on('exit', (code, signal) => {
    if (stopping) return;
    say(`${name} exited (${signal ?? `code ${code}`}); stopping everything`);
    shutdown(1);
  });
  list.push({ name, proc });
}

function get(url, headers = {}) {
  return new Promise((resolve) => {
    const lib = url.startsWith('https:') ? https : http;
    const req = lib.get(url, { headers, rejectUnauthorized: false, timeout: 3000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

async function waitReady(name, url, seconds = 60) {
  for (const until = Date.now() + seconds * 1000; Date.now() < until && !stopping; await sleep(300)) {
    if ((await get(url)).status === 200) return;
  }
  if (!stopping) throw new DevError(`${name} was not ready at ${url} after ${seconds} s`);
}

/** The saved demo when its key still answers GET /v1/me here; otherwise a new one, saved. */
async function ensureDemo(apiUrl) {
  const me = (key) => get(`${apiUrl}/v1/me`, { Authorization: `Bearer ${key}` });
  let saved = null;
  try {
    saved = JSON.parse(fs.readFileSync(demoFile, 'utf8'));
  } catch {} // none yet, or unreadable: make a new one
  if (saved?.key) {
    const res = await me(saved.key);
    if (res.status === 200) return { demo: saved, me: res, reused: true };
    say(`the saved demo key answers ${res.status} here (another database?); making a new demo tenant`);
  }
  const demo = admin(['demo', 'setup', '--json']);
  fs.writeFileSync(demoFile, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  const res = await me(demo.key);
  if (res.status !== 200) throw new DevError(`GET /v1/me with the new demo key answered ${res.status}: ${res.body}`);
  return { demo, me: res, reused: false };
}

function banner({ demo, me, reused }, pg, redis, consoleLink, translation, receiver) {
  const base = `https://localhost:${PORT}`;
  const line = '─'.repeat(78);
  const rows = [
    line,
    ' Integrations API is running (self-signed certificate: use curl -k)',
    `   api           ${base}            ready: ${base}/health/ready`,
    `   worker        health: http://localhost:${WORKER_PORT}/health/ready`,
    `   OpenAPI       ${base}/v1/openapi.json`,
    METRICS_ON
      ? `   metrics       api: ${METRICS_PORT ? `http://localhost:${METRICS_PORT}/metrics` : 'a free port (METRICS_PORT=0: see the api log)'}   worker: http://localhost:${WORKER_PORT}/metrics`
      : '   metrics       off (METRICS_ENABLED=false)',
    `   Postgres      ${masked(pg.url)}  (${pg.how})`,
    `   Redis         ${masked(redis.url)}  (${redis.how})`,
    translation.engine === 'none'
      ? `   Translation   NONE: ${translation.note}\n                 (other engines: docs/partners/documents.md#engines)`
      : `   Translation   ${translation.engine}${env.TRANSLATION_ENGINE_URL ? ` ${env.TRANSLATION_ENGINE_URL}` : ''}: ${translation.note}`,
    ` Demo tenant ${reused ? '(reused from .data/demo.json)' : '(new, saved in .data/demo.json)'}`,
    `   organisation  ${demo.organisation_id}`,
    `   connection    ${demo.connection_id}  (all scopes)`,
    `   key id        ${demo.key_id}`,
    `   key           ${demo.key}`,
    `   checked       GET /v1/me → ${me.status}, connection ${JSON.parse(me.body).data?.id}`,
    ' Try it:',
    `   curl -k ${base}/v1/me -H "Authorization: Bearer ${demo.key}"`,
    `   curl -k ${base}/v1/cases -H "Authorization: Bearer ${demo.key}"`,
    `   curl -k ${base}/v1/conversations -H "Authorization: Bearer ${demo.key}"`,
    `   curl -k ${base}/v1/users -H "Authorization: Bearer ${demo.key}"`,
    `   curl -k "${base}/scim/v2/Users?count=5" -H "Authorization: Bearer ${demo.key}"`,
    ...(consoleLink
      ? [
          ' Integrations section (web console), signed in as the demo integrations manager:',
          `   ${consoleLink.url}`,
          `   (works once, for 15 minutes; another: npm run admin -- console link --person ${consoleLink.person})`,
        ]
      : [' Integrations section: this demo organisation was seeded before it had an integrations manager (see docs/console.md)']),
    ...(receiver ? [' Webhooks to this machine (https://127.0.0.1/…, trusted and allowed in this dev run only):', '   npm run admin -- webhook listen'] : []),
    ` Ctrl-C (or SIGTERM / SIGHUP to npm or to dev, pid ${process.pid}) stops everything.`,
    line,
  ];
  process.stdout.write(`\n${rows.join('\n')}\n\n`);
}

function stopChild({ proc }, graceMs = Number(env.SHUTDOWN_GRACE_MS || 25000) + 5000) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

async function shutdown(code) {
  if (stopping) return;
  stopping = true;
  const anything = apps.length + services.length > 0 || backing.startedPostgres();
  if (anything) say('stopping…');
  await Promise.all(apps.map((c) => stopChild(c)));
  await Promise.all(services.map((c) => stopChild(c)));
  await backing.stopPostgres(); // unless Ctrl-C reached it too and it is gone already
  if (anything) say('stopped');
  process.exit(code);
}

async function main() {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => shutdown(0));
  // `npm run dev` killed with a signal npm does not pass on (SIGHUP, SIGKILL) leaves this process
  // orphaned and unsignalled: a new parent is our cue to stop what we started.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && shutdown(0), 500).unref();
  if (!(await portFree(PORT, env.HOST || '0.0.0.0'))) {
    throw new DevError(`port ${PORT} is already in use (another api or npm run dev?). Stop it, or run: PORT=${PORT + 1} npm run dev`);
  }
  if (!(await portFree(WORKER_PORT, '0.0.0.0'))) {
    throw new DevError(`port ${WORKER_PORT} (worker health) is already in use. Stop it, or set WORKER_HEALTH_PORT`);
  }
  if (METRICS_ON && METRICS_PORT !== 0 && !(await portFree(METRICS_PORT, env.HOST || '0.0.0.0'))) {
    throw new DevError(`port ${METRICS_PORT} (the api's metrics) is already in use. Stop it, or set METRICS_PORT (0 picks a free one)`);
  }
  // The servers first: a DATABASE_URL or REDIS_URL that does not answer is said at once, not after a build.
  const pg = await backing.ensurePostgres();
  const redis = await backing.ensureRedis();
  build();
  Object.assign(env, { DATABASE_URL: pg.url, REDIS_URL: redis.url });
  const translation = chooseDevTranslation(env, { say });
  const receiver = await allowLocalReceiver(env, dataDir);
  say(`migrating ${masked(pg.url)}…`);
  const { applied = [] } = admin(['migrate', '--json']);
  say(applied.length ? `applied: ${applied.join(', ')}` : 'schema up to date');
  startChild(apps, 'api', process.execPath, ['dist/apps/api/src/main.js']);
  startChild(apps, 'worker', process.execPath, ['dist/apps/worker/src/main.js']);
  const apiUrl = `https://127.0.0.1:${PORT}`;
  await Promise.all([waitReady('api', `${apiUrl}/health/ready`), waitReady('worker', `http://127.0.0.1:${WORKER_PORT}/health/ready`)]);
  if (stopping) return;
  const demo = await ensureDemo(apiUrl);
  // Realistic data to list (groups, people, cases, conversations with transcripts); skipped once seeded.
  const seeded = admin(['demo', 'seed', '--org', demo.demo.organisation_id, '--json']);
  if (seeded.cases) say(`seeded demo data: ${seeded.groups} groups, ${seeded.people} people, ${seeded.cases} cases, ${seeded.conversations} conversations`);
  // A one-time sign-in link to the Integrations section for the demo's integrations manager.
  const consoleLink = seeded.console_person_id
    ? { person: seeded.console_person_id, ...admin(['console', 'link', '--person', seeded.console_person_id, '--json']) }
    : null;
  banner(demo, pg, redis, consoleLink, translation, receiver);
}

main().catch((err) => {
  process.stderr.write(`[dev] ${err instanceof DevError ? err.message : (err?.stack ?? err)}\n`);
  shutdown(1);
});
