#!/usr/bin/env node
// Start-up: how long the api and the worker take from spawn to their first green readiness probe
// (api: GET /health/ready over HTTPS on its port; worker: GET /health/ready on WORKER_HEALTH_PORT),
// probed every 10 ms, against a migrated database and Redis, NODE_ENV=production. Each is started
// `rounds` times (after one start not counted), each stopped before the next starts, in a rotating
// order with, in the same rounds: `node -e 0` (node itself) and the time to require each entry
// module's imports without running it (what loading the code costs); with BENCH_BASELINE_DIST,
// that build's api and worker too.
//   npm run build && node bench/startup.bench.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');

const distDir = h.distFrom();
const baselineDir = process.env.BENCH_BASELINE_DIST ? h.distFrom('BENCH_BASELINE_DIST') : null;
const work = h.workDir('bench');
const DB_NAME = 'integrations_bench_startup';
const SETTINGS = {
  rounds: Number(process.env.BENCH_STARTUP_ROUNDS || 10),
  probe_every_ms: 10,
  node_env: 'production',
  log_level: 'info',
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchstartup',
};
const TARGET_MS = 2000;
const say = h.sayer('bench:startup');
const env = (extra = {}) => h.appEnv({ ...SETTINGS, node_env: SETTINGS.node_env }, { dataDir: work, clean: true }, extra);

/** Spawns `node args` with `childEnv`; answers ms from just before spawn to the first 200 from its readiness probe (HTTPS unless `tls` is false), then stops it. */
async function timeToReady(name, args, childEnv, port, tls) {
  const t0 = process.hrtime.bigint();
  const proc = h.start(name, args, childEnv, { quiet: true });
  try {
    await h.waitHttpReady(name, proc, port, { tls, everyMs: SETTINGS.probe_every_ms });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    await h.stop(proc);
  }
}

/** ms for `node args` to run to its end. */
function timeToExit(args, childEnv) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const proc = h.start('node', args, childEnv, { quiet: true });
    proc.on('exit', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`node ${args.join(' ')}: exit ${code}\n${proc.stderrText}`)),
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
  return { p50_ms: Math.round(h.quantile(sorted, 0.5)), max_ms: Math.round(sorted[sorted.length - 1]), min_ms: Math.round(sorted[0]) };
};

async function main() {
  h.requireBuilds([distDir, baselineDir], ['api', 'worker', 'admin']);
  const tls = await h.ensureCert(work);
  await h.recreateDatabase(SETTINGS.database_url);
  const { applied = [] } = h.admin(['migrate'], { dist: distDir, env: env() });
  say(`database ${DB_NAME} recreated and migrated (${applied.length} migrations)`);
  const api = (dir) => async () => {
    const port = await h.freePort();
    return timeToReady('api', [h.entry(dir, 'api')], env({ ...tls, PORT: String(port), METRICS_PORT: '0' }), port, true);
  };
  const worker = (dir) => async () => {
    const port = await h.freePort();
    return timeToReady('worker', [h.entry(dir, 'worker')], env({ WORKER_HEALTH_PORT: String(port) }), port, false);
  };
  const kinds = {
    api: api(distDir),
    worker: worker(distDir),
    ...(baselineDir ? { api_baseline: api(baselineDir), worker_baseline: worker(baselineDir) } : {}),
    node_itself: () => timeToExit(['-e', '0'], env()),
    api_require_only: () => timeToExit(requireOnlyArgs(h.entry(distDir, 'api')), env(tls)),
    worker_require_only: () => timeToExit(requireOnlyArgs(h.entry(distDir, 'worker')), env()),
  };
  const order = Object.keys(kinds);
  const times = Object.fromEntries(order.map((k) => [k, []]));
  // One start of each first, not counted: the first reads every file from disk.
  for (const k of order) await kinds[k]();
  const loadBefore = h.loadAverage();
  for (let round = 0; round < SETTINGS.rounds; round++) {
    for (const k of h.rotated(order, round)) times[k].push(await kinds[k]());
    say(`round ${round + 1}: ${order.map((k) => `${k} ${Math.round(times[k][round])} ms`).join(', ')}`);
  }
  const loadAfter = h.loadAverage();
  const results = Object.fromEntries(order.map((k) => [k, { ...stats(times[k]), all_ms: times[k].map((t) => Math.round(t)) }]));
  const met = { api: results.api.max_ms < TARGET_MS, worker: results.worker.max_ms < TARGET_MS };
  const report = {
    benchmark: 'start-up: spawn to first green readiness probe',
    date: new Date().toISOString(),
    commit: h.gitCommit(),
    machine: { load_average_1m_before: loadBefore, load_average_1m_after: loadAfter, ...h.machine() },
    builds: { measured: path.relative(h.root, distDir) || '.', baseline: baselineDir && (path.relative(h.root, baselineDir) || '.') },
    settings: { ...SETTINGS, tls: 'TLS_CERT_FILE/TLS_KEY_FILE (self-signed, made once by the bench)' },
    target_ms: TARGET_MS,
    results,
    target_met: met,
  };
  say(writeReport('startup', report));
}

h.runMain(main, { tag: 'bench:startup', giveUpMinutes: 15 });
