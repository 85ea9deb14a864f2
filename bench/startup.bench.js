#!/usr/bin/env node
// Start-up: how long the api and the worker take from spawn to their first green readiness probe
// (api: GET /health/ready over HTTPS on its port; worker: GET /health/ready on WORKER_HEALTH_PORT),
// against a migrated database and Redis, NODE_ENV=production. Each is started `rounds` times,
// api and worker alternating (a shared host's speed drifts: both meet the same drift), each
// stopped before the next starts. Beside them, in the same rounds: `node -e 0` (node itself) and
// the time to require the entry module's imports without running it (what loading costs). Loopback
// only; a dedicated database it drops and recreates; it stops by itself and kills its children on
// the way out. See bench/README.md.
//
//   npm run build && node bench/startup.bench.js
//
// Env: BENCH_DIST (the build to run, default dist/), BENCH_BASELINE_DIST (another build, e.g. the
// one before a change: its api and worker are started in the same rounds, alternating with
// BENCH_DIST's), BENCH_STARTUP_ROUNDS (default 10), BENCH_DATABASE_SERVER_URL, BENCH_REDIS_URL.
'use strict';
const lib = require('./lib');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');

const { root, sleep } = lib;
const distDir = path.resolve(root, process.env.BENCH_DIST || 'dist');
const baselineDir = process.env.BENCH_BASELINE_DIST ? path.resolve(root, process.env.BENCH_BASELINE_DIST) : null;
const work = path.join(root, '.data', 'bench');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_startup';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SETTINGS = {
  rounds: Number(process.env.BENCH_STARTUP_ROUNDS || 10),
  probe_every_ms: 10,
  node_env: 'production',
  log_level: 'info',
  database_url: lib.withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchstartup',
};
const TARGET_MS = 2000;
const say = (msg) => process.stdout.write(`[bench:startup] ${msg}\n`);

function env(extra = {}) {
  return {
    PATH: process.env.PATH,
    NODE_ENV: SETTINGS.node_env,
    LOG_LEVEL: SETTINGS.log_level,
    HOST,
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    DATA_DIR: work,
    ...extra,
  };
}

/** One GET to 127.0.0.1:`port`, over HTTPS or plain HTTP; answers the status, 0 on any error. */
function probe(port, tls) {
  return new Promise((resolve) => {
    const mod = tls ? require('node:https') : http;
    const req = mod.request(
      { host: HOST, port, path: '/health/ready', method: 'GET', timeout: 1000, rejectUnauthorized: false, servername: 'localhost', agent: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
        res.on('error', () => resolve(0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** Spawns `node args` with `childEnv`; answers ms from just before spawn to the first 200 from the probe, then stops the child. */
async function timeToReady(name, args, childEnv, port, tls) {
  const t0 = process.hrtime.bigint();
  const proc = lib.track(spawn(process.execPath, args, { cwd: root, env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  proc.stderr.on('data', (c) => (stderr += c));
  try {
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(SETTINGS.probe_every_ms)) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${name} exited before it was ready:\n${stderr}`);
      if ((await probe(port, tls)) === 200) return Number(process.hrtime.bigint() - t0) / 1e6;
    }
    throw new Error(`${name} was not ready after 60 s:\n${stderr}`);
  } finally {
    await lib.stop(proc);
  }
}

/** ms for `node args` to run to its end. */
function timeToExit(args, childEnv) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const proc = lib.track(spawn(process.execPath, args, { cwd: root, env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] }));
    let stderr = '';
    proc.stderr.on('data', (c) => (stderr += c));
    proc.on('exit', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`node ${args.join(' ')}: exit ${code}\n${stderr}`)),
    );
  });
}

/**
 * `node -e` requiring what an entry module requires (its top-level imports, in order), without
 * running its main(): the cost of loading the code, as part of start-up.
 */
function requireOnlyArgs(entry) {
  const source = fs.readFileSync(entry, 'utf8');
  const specs = [...source.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
  const dir = path.dirname(entry);
  const resolved = specs.map((s) => (s.startsWith('.') ? path.join(dir, s) : s));
  return ['-e', resolved.map((s) => `require(${JSON.stringify(s)});`).join('')];
}

const stats = (times) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { p50_ms: Math.round(lib.quantile(sorted, 0.5)), max_ms: Math.round(sorted[sorted.length - 1]), min_ms: Math.round(sorted[0]) };
};

async function main() {
  for (const dir of [distDir, baselineDir].filter(Boolean)) {
    for (const rel of ['apps/api/src/main.js', 'apps/worker/src/main.js', 'apps/admin/src/main.js']) {
      if (!fs.existsSync(path.join(dir, rel))) throw new Error(`${path.join(dir, rel)} is missing: run npm run build first (or point BENCH_DIST at a build)`);
    }
  }
  const tls = await lib.ensureCert(work, HOST);
  await lib.recreateDatabase(server, DB_NAME);
  const { applied = [] } = lib.admin(['migrate'], { dist: distDir, env: env() });
  say(`database ${DB_NAME} recreated and migrated (${applied.length} migrations)`);
  const api = (dir) => async () => {
    const port = await lib.freePort(HOST);
    return timeToReady('api', [path.join(dir, 'apps/api/src/main.js')], env({ ...tls, PORT: String(port), METRICS_PORT: '0' }), port, true);
  };
  const worker = (dir) => async () => {
    const port = await lib.freePort(HOST);
    return timeToReady('worker', [path.join(dir, 'apps/worker/src/main.js')], env({ WORKER_HEALTH_PORT: String(port) }), port, false);
  };
  const kinds = {
    api: api(distDir),
    worker: worker(distDir),
    ...(baselineDir ? { api_baseline: api(baselineDir), worker_baseline: worker(baselineDir) } : {}),
    node_itself: () => timeToExit(['-e', '0'], env()),
    api_require_only: () => timeToExit(requireOnlyArgs(path.join(distDir, 'apps/api/src/main.js')), env(tls)),
    worker_require_only: () => timeToExit(requireOnlyArgs(path.join(distDir, 'apps/worker/src/main.js')), env()),
  };
  const order = Object.keys(kinds);
  const times = Object.fromEntries(order.map((k) => [k, []]));
  // One start of each first, not counted: the first reads every file from disk.
  for (const k of order) await kinds[k]();
  const loadBefore = os.loadavg()[0];
  for (let round = 0; round < SETTINGS.rounds; round++) {
    for (let i = 0; i < order.length; i++) {
      const k = order[(i + round) % order.length];
      times[k].push(await kinds[k]());
    }
    say(`round ${round + 1}: ${order.map((k) => `${k} ${Math.round(times[k][round])} ms`).join(', ')}`);
  }
  const loadAfter = os.loadavg()[0];
  const results = Object.fromEntries(order.map((k) => [k, { ...stats(times[k]), all_ms: times[k].map((t) => Math.round(t)) }]));
  const met = { api: results.api.max_ms < TARGET_MS, worker: results.worker.max_ms < TARGET_MS };
  const report = {
    benchmark: 'start-up: spawn to first green readiness probe',
    date: new Date().toISOString(),
    commit: lib.gitCommit(),
    machine: { load_average_1m_before: +loadBefore.toFixed(2), load_average_1m_after: +loadAfter.toFixed(2), ...lib.machine() },
    builds: { measured: path.relative(root, distDir) || '.', baseline: baselineDir && (path.relative(root, baselineDir) || '.') },
    settings: { ...SETTINGS, tls: 'TLS_CERT_FILE/TLS_KEY_FILE (self-signed, made once by the bench)' },
    target_ms: TARGET_MS,
    results,
    target_met: met,
  };
  const label = {
    api: '**api** (spawn → `GET /health/ready` 200 over HTTPS)',
    worker: '**worker** (spawn → `GET /health/ready` 200 on WORKER_HEALTH_PORT)',
    api_baseline: `api of the baseline build (${report.builds.baseline})`,
    worker_baseline: `worker of the baseline build (${report.builds.baseline})`,
    node_itself: '`node -e 0` (node itself)',
    api_require_only: "api's imports required, main() not run",
    worker_require_only: "worker's imports required, main() not run",
  };
  const md = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit}, load average ${report.machine.load_average_1m_before} before, ${report.machine.load_average_1m_after} after.`,
    `${SETTINGS.rounds} starts of each (after one not counted), in rotating order; NODE_ENV=production, LOG_LEVEL=${SETTINGS.log_level}, migrated database, local Redis; probed every ${SETTINGS.probe_every_ms} ms.`,
    '',
    '| process | p50 ms | max ms | min ms |',
    '|---|---:|---:|---:|',
    ...order.map((k) => `| ${label[k]} | ${results[k].p50_ms} | ${results[k].max_ms} | ${results[k].min_ms} |`),
    '',
    `Target (each ready in under ${TARGET_MS} ms, every start): api **${met.api ? 'met' : 'not met'}**, worker **${met.worker ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
  lib.writeResults('startup', report, md, 'Start-up benchmark');
  say(`written to bench/results/startup.{json,md}\n${md}`);
}

lib.runMain(main, { tag: 'bench:startup', giveUpMinutes: 15 });
