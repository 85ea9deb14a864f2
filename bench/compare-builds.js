#!/usr/bin/env node
// Compares authenticated GET /v1/me of two builds of the api, to tell a change's effect from this
// host's drift: both run at once (idle when not loaded) and are loaded in turn, in 5 s slices whose
// order alternates each round; the answer is the median over the rounds of B's req/s ÷ A's.
//   node bench/compare-builds.js <distA> <distB>      e.g. a `git worktree` of the old commit, built
// Each dist must lie inside this checkout (its node_modules resolve from here). Env: AB_ROUNDS (10).
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
  LOG_LEVEL: 'warn',
  HOST,
  AUTH_CACHE_TTL_SECONDS: '60',
  // Buckets no load here can empty: the bench measures the rate limit's cost (one EVALSHA a call), never its 429s.
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
    const proc = lib.start(name, [path.join(dist, 'apps/api/src/main.js')], { ...env, ...tls, PORT: String(port), METRICS_PORT: '0' });
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
    targets.push({ name, url });
  }
  for (const t of targets) await load(t.url, key, 3);
  const rounds = Number(process.env.AB_ROUNDS || 10);
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    const got = {};
    for (const t of round % 2 ? targets : [...targets].reverse()) got[t.name] = await load(t.url, key, 5);
    ratios.push(got.B.requests.average / got.A.requests.average);
    say(
      `round ${round}: A ${Math.round(got.A.requests.average)} req/s p99 ${got.A.latency.p99} ms | B ${Math.round(got.B.requests.average)} req/s p99 ${got.B.latency.p99} ms | B/A ${ratios.at(-1).toFixed(3)}`,
    );
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  const mid = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  say(`B ÷ A, median of ${rounds} rounds: ${mid.toFixed(3)} (rounds ${sorted[0].toFixed(2)}–${sorted.at(-1).toFixed(2)})`);
}

lib.runMain(main, { tag: 'compare', giveUpMinutes: 10 });
