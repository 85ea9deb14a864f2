#!/usr/bin/env node
// Compares authenticated GET /v1/me of two builds of the api, to tell a change's effect from this
// host's drift: both run at once (idle when not loaded) and are loaded in turn, in 5 s slices whose
// order alternates each round; the answer is the median over the rounds of B's req/s ÷ A's.
//   node bench/compare-builds.js <distA> <distB>      e.g. a `git worktree` of the old commit, built
// Each dist must lie inside this checkout (its node_modules resolve from here). Env: AB_ROUNDS (10),
// AB_LOG_LEVEL (info, the level operators run, one request line per call; each api's log goes to a
// file under .data/bench, never through this process).
// Beside req/s it prints each build's CPU time per request (user + system, from /proc/<pid>/stat
// around each slice): on a machine shared with other work, req/s follows whatever else runs, while
// the CPU a request costs the api moves much less, so it tells a small change from drift sooner.
// Prints only; nothing is written to bench/results/.
'use strict';
const lib = require('./lib');
const autocannon = require('autocannon');
const path = require('node:path');

const HOST = '127.0.0.1';
const work = path.join(lib.root, '.data', 'bench');
const env = {
  ...process.env,
  NODE_ENV: 'production',
  LOG_LEVEL: process.env.AB_LOG_LEVEL || 'info',
  HOST,
  AUTH_CACHE_TTL_SECONDS: '60',
  // Buckets no load here can empty: the bench measures the rate limit's cost (a Redis script call per busy bucket per turn), never its 429s.
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '10000000',
  SCIM_RATE_LIMIT_PER_SECOND: '1000000',
  SCIM_RATE_LIMIT_BURST: '10000000',
  DATA_DIR: work,
  DATABASE_URL: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench',
  REDIS_URL: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  REDIS_PREFIX: 'iabench',
};
const say = (msg) => process.stdout.write(`[compare] ${msg}\n`);
const { cpuMs } = lib;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = (url, key, duration) =>
  new Promise((resolve, reject) =>
    autocannon({ url, headers: { authorization: `Bearer ${key}` }, duration, connections: 50, servername: 'localhost' }, (err, r) =>
      err ? reject(err) : r.non2xx || r.errors ? reject(new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`)) : resolve(r),
    ),
  );

async function main() {
  const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
  if (!distA || !distB) throw new Error('usage: node bench/compare-builds.js <distA> <distB>');
  const tls = await lib.ensureCert(work, HOST);
  const admin = (args) => lib.admin(args, { dist: distB, env: { ...env, ...tls } });
  const { key } = lib.makeTenant(admin, { org: `compare ${new Date().toISOString()}` });
  const targets = [];
  for (const [name, dist] of [
    ['A', distA],
    ['B', distB],
  ]) {
    const port = await lib.freePort(HOST);
    const proc = lib.start(
      name,
      [path.join(dist, 'apps/api/src/main.js')],
      { ...env, ...tls, PORT: String(port), METRICS_PORT: '0' },
      { stdoutFile: path.join(work, `compare-${name}.log`) },
    );
    const url = `https://${HOST}:${port}/v1/me`;
    await lib.waitReady(
      name,
      proc,
      () =>
        lib.request({ port, path: '/health/ready', timeout: 3000 }).then(
          (r) => r.status === 200,
          () => false,
        ),
      { at: url },
    );
    targets.push({ name, url, pid: proc.pid });
  }
  for (const t of targets) await load(t.url, key, 3);
  const rounds = Number(process.env.AB_ROUNDS || 10);
  const ratios = [];
  const cpuRatios = [];
  const cpuPerRequest = { A: [], B: [] };
  for (let round = 1; round <= rounds; round++) {
    const got = {};
    for (const t of round % 2 ? targets : [...targets].reverse()) {
      const before = cpuMs(t.pid);
      got[t.name] = await load(t.url, key, 5);
      cpuPerRequest[t.name].push(((cpuMs(t.pid) - before) * 1000) / got[t.name].requests.total);
    }
    ratios.push(got.B.requests.average / got.A.requests.average);
    cpuRatios.push(cpuPerRequest.B.at(-1) / cpuPerRequest.A.at(-1));
    say(
      `round ${round}: A ${Math.round(got.A.requests.average)} req/s p99 ${got.A.latency.p99} ms ${Math.round(cpuPerRequest.A.at(-1))} µs CPU/req | B ${Math.round(got.B.requests.average)} req/s p99 ${got.B.latency.p99} ms ${Math.round(cpuPerRequest.B.at(-1))} µs CPU/req | B/A ${ratios.at(-1).toFixed(3)}, CPU/req B/A ${cpuRatios.at(-1).toFixed(3)}`,
    );
  }
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  say(`LOG_LEVEL=${env.LOG_LEVEL}; B ÷ A req/s, median of ${rounds} rounds: ${median(ratios).toFixed(3)} (rounds ${range(ratios)})`);
  say(
    `CPU per request: A ${Math.round(median(cpuPerRequest.A))} µs, B ${Math.round(median(cpuPerRequest.B))} µs (medians); B ÷ A median ${median(cpuRatios).toFixed(3)} (rounds ${range(cpuRatios)})`,
  );
}

lib.runMain(main, { tag: 'compare', giveUpMinutes: 10 });
