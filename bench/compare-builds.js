#!/usr/bin/env node
// Did a change make a build faster or slower? Two builds side by side on one machine, in rounds that
// take turns (A then B, then B then A, …) so that the machine's drift weighs on both alike.
//
// GET /v1/me (the default): the api of both builds runs at once (idle when not loaded); each round
// loads A and B in turn for 5 s (autocannon, 50 connections) and reads the CPU each process used
// (/proc). It prints the median over the rounds of B's req/s ÷ A's and of B's CPU per request ÷ A's,
// with the range of the rounds: on a shared machine req/s follows whatever else runs, while the CPU a
// request costs moves much less. Prints only; nothing is written to bench/results/.
//   node bench/compare-builds.js <distA> <distB>    (each inside a checkout whose node_modules resolve)
//
// Webhook deliveries (--webhooks): each build's worker (webhooks.bench.js's worker run: warm-up, then
// AB_DELIVERIES events at once, timed until the receiver has them all) on a database of its own,
// migrated by that build's admin CLI; one worker at a time, a fresh one each round. Per round and
// build: deliveries per second and the CPU per delivery of the processes a delivery runs through
// (/proc: the worker, the Postgres backends of its database, the receiver, this script), with the
// Redis server's and every Postgres process's beside it (servers other work on the machine shares).
// Reported: each build's medians and B ÷ A per round and its median, against the bound (B's CPU per
// delivery at most 10% above A's, deliveries/s at most 10% below). Writes
// results/webhooks-compare.json and .md.
//   node bench/compare-builds.js --webhooks <distA> <distB>
'use strict';
const path = require('node:path');
const h = require('./harness');
const { meTenant, startMeApi, work } = require('./me-api');
const { writeReport } = require('./markdown');

const ROUNDS = Number(process.env.AB_ROUNDS || 10);
const LOG_LEVEL = process.env.AB_LOG_LEVEL || 'info';
const say = h.sayer('compare');

/** 5 s (or `duration`) of load on `t`: autocannon's result and the CPU µs per request of its api. */
async function load(t, key, duration = 5) {
  const before = h.cpuMs(t.proc.pid);
  const r = await h.cannon({ url: t.url, headers: { authorization: `Bearer ${key}` }, duration, connections: 50 });
  if (r.non2xx || r.errors) throw new Error(`${t.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { r, cpuPerRequest: ((h.cpuMs(t.proc.pid) - before) * 1000) / r.requests.total };
}

async function me(distA, distB) {
  const tls = await h.ensureCert(work);
  const { key } = meTenant(distB, `compare ${new Date().toISOString()}`);
  const targets = [];
  for (const [name, dist] of [
    ['A', distA],
    ['B', distB],
  ]) {
    const api = await startMeApi(name, { dist, logLevel: LOG_LEVEL, tls, logFile: `compare-${name}.log` });
    targets.push({ name, ...api, url: `https://127.0.0.1:${api.port}/v1/me` });
  }
  for (const t of targets) await load(t, key, 3);
  const ratios = [];
  const cpuRatios = [];
  const cpuPerRequest = { A: [], B: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const got = {};
    for (const t of h.alternated(targets, round)) {
      const { r, cpuPerRequest: cpu } = await load(t, key);
      got[t.name] = r;
      cpuPerRequest[t.name].push(cpu);
    }
    ratios.push(got.B.requests.average / got.A.requests.average);
    cpuRatios.push(cpuPerRequest.B.at(-1) / cpuPerRequest.A.at(-1));
    const line = (n) => `${n} ${Math.round(got[n].requests.average)} req/s p99 ${got[n].latency.p99} ms ${Math.round(cpuPerRequest[n].at(-1))} µs CPU/req`;
    say(`round ${round}: ${line('A')} | ${line('B')} | B/A ${ratios.at(-1).toFixed(3)}, CPU/req B/A ${cpuRatios.at(-1).toFixed(3)}`);
  }
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  say(`LOG_LEVEL=${LOG_LEVEL}; B ÷ A req/s, median of ${ROUNDS} rounds: ${h.median(ratios).toFixed(3)} (rounds ${range(ratios)})`);
  say(
    `CPU per request: A ${Math.round(h.median(cpuPerRequest.A))} µs, B ${Math.round(h.median(cpuPerRequest.B))} µs (medians); B ÷ A median ${h.median(cpuRatios).toFixed(3)} (rounds ${range(cpuRatios)})`,
  );
}

const WEBHOOKS = {
  rounds: Number(process.env.AB_ROUNDS || 6),
  deliveries: Number(process.env.AB_DELIVERIES || 10_000),
  warmup: Number(process.env.AB_WARMUP_DELIVERIES || 2_000),
  /** The receiver's loopback address: not 127.0.0.1, whose port 443 the test suite binds. */
  receiver_host: process.env.AB_RECEIVER_HOST || '127.0.0.2',
  /**
   * The workers' WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK, out of reach by default: at a cap equal to the
   * worker's concurrency, a starved machine delays the slots' releases enough that some attempts find
   * the webhook full and are parked and queued again (a second job each), at random in either build's
   * rounds; the cap is the same code in both, so the comparison leaves it out.
   */
  max_in_flight_per_webhook: Number(process.env.AB_MAX_IN_FLIGHT || 1000),
  /** B ÷ A bounds: CPU per delivery at most this ratio, deliveries/s at least this one. */
  bound: { max_cpu_ratio: 1.1, min_rate_ratio: 0.9 },
};

/** Deliveries/s and CPU per delivery of two builds' workers, in rounds that take turns; writes webhooks-compare.{json,md}. */
async function webhooks(distA, distB) {
  const wh = require('./webhooks.bench');
  h.requireBuilds([distA, distB], ['WorkerModule', 'admin']);
  const builds = [
    ['A', distA],
    ['B', distB],
  ].map(([name, dist]) => {
    const commit = h.gitCommit(path.dirname(dist), { headOnly: true });
    return { name, dist, description: `${path.relative(h.root, dist) || dist}${commit ? `, commit ${commit}` : ''}` };
  });
  const load = h.loadBefore(say);
  const tls = await h.ensureCert(h.workDir('bench-compare'), WEBHOOKS.receiver_host);
  const sites = {};
  for (const b of builds) {
    const databaseUrl = h.databaseUrl(`integrations_bench_compare_${b.name.toLowerCase()}`);
    sites[b.name] = await wh.makeSite({
      dist: b.dist,
      databaseUrl,
      redisPrefix: `iabenchab${b.name.toLowerCase()}`,
      receiverHost: WEBHOOKS.receiver_host,
      org: `compare ${b.name} ${new Date().toISOString()}`,
    });
    say(`${b.name}: ${b.description}; its own database ${databaseUrl}, migrated by its admin CLI`);
  }
  await wh.sayAutovacuum(sites.A.db);
  const Redis = require('ioredis');
  const redis = new Redis(h.redisUrl(), { lazyConnect: false, maxRetriesPerRequest: 1 });
  const receiver = await h.startReceiver(tls, { host: WEBHOOKS.receiver_host, retryForMs: 600_000 });
  const runs = [];
  try {
    for (let round = 1; round <= WEBHOOKS.rounds; round++) {
      for (const build of h.alternated(builds, round)) {
        const run = await wh.runWorker({
          build,
          site: sites[build.name],
          round,
          tls,
          redis,
          receiver,
          rates: [],
          receiverHost: WEBHOOKS.receiver_host,
          deliveries: WEBHOOKS.deliveries,
          warmup: WEBHOOKS.warmup,
          maxInFlight: WEBHOOKS.max_in_flight_per_webhook,
        });
        runs.push({ ...run, load_average_1m_after: h.loadAverage() });
      }
      const [a, b] = ['A', 'B'].map((n) => runs.find((x) => x.round === round && x.build === n));
      say(
        `round ${round}: B ÷ A deliveries/s ${(b.throughput.per_second / a.throughput.per_second).toFixed(3)}, CPU per delivery ${(b.own_cpu_ms.total / a.own_cpu_ms.total).toFixed(3)}`,
      );
    }
    const checks = {};
    for (const b of builds) {
      const expected = runs.filter((x) => x.build === b.name).reduce((sum, x) => sum + x.emitted, 0);
      checks[b.name] = { expected, ...(await wh.logged(sites[b.name], expected)) };
      if (checks[b.name].delivered !== expected) throw new Error(`${b.name}: ${checks[b.name].delivered} of ${expected} deliveries delivered`);
    }
    const report = {
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { ...h.machine(), load_average_1m_before: load },
      settings: {
        ...WEBHOOKS,
        worker_concurrency: wh.SETTINGS.worker_concurrency,
        worker_db_pool: wh.SETTINGS.worker_db_pool,
        worker_node_env: wh.SETTINGS.worker_node_env,
        worker_log_level: wh.SETTINGS.worker_log_level,
      },
      builds: builds.map(({ name, description }) => ({ name, description })),
      runs: runs.map((x) => ({
        round: x.round,
        build: x.build,
        load_average_1m_before: x.load_average_1m_before,
        load_average_1m_after: x.load_average_1m_after,
        throughput: x.throughput,
        own_cpu_ms: x.own_cpu_ms,
        machine_cpu_ms: x.machine_cpu_ms,
        worker_cpu_ms: x.counts.worker_cpu_ms,
        sql_statements: x.counts.sql_statements,
        redis_commands: x.counts.redis_commands,
      })),
      summary: compareSummary(runs),
      checks,
    };
    process.stdout.write(`\n${writeReport('webhooks-compare', report)}\n`);
  } finally {
    await h.stop(receiver.proc);
    for (const site of Object.values(sites)) await site.close();
    redis.disconnect();
  }
}

/** Each build's medians over its rounds, and B ÷ A round by round (the two runs of one round met the same machine) with their median. */
function compareSummary(runs) {
  const of = (name) => runs.filter((x) => x.build === name);
  const perBuild = (name) => ({
    per_second: { median: h.median(of(name).map((x) => x.throughput.per_second)), range: h.spread(of(name).map((x) => x.throughput.per_second)) },
    own_cpu_ms: { median: h.median(of(name).map((x) => x.own_cpu_ms.total)), range: h.spread(of(name).map((x) => x.own_cpu_ms.total)) },
    machine_cpu_ms: { median: h.median(of(name).map((x) => x.machine_cpu_ms.total)), range: h.spread(of(name).map((x) => x.machine_cpu_ms.total)) },
    redis_server_cpu_ms: h.median(of(name).map((x) => x.machine_cpu_ms.by.redis ?? 0)),
    worker_cpu_ms: { median: h.median(of(name).map((x) => x.counts.worker_cpu_ms)), range: h.spread(of(name).map((x) => x.counts.worker_cpu_ms)) },
    by_part_ms: Object.fromEntries(Object.keys(of(name)[0].own_cpu_ms.by).map((part) => [part, h.median(of(name).map((x) => x.own_cpu_ms.by[part] ?? 0))])),
    sql_statements: h.median(of(name).map((x) => x.counts.sql_statements.total)),
    redis_commands: h.median(of(name).map((x) => x.counts.redis_commands.total)),
  });
  const paired = of('A').map((a) => {
    const b = of('B').find((x) => x.round === a.round);
    return {
      round: a.round,
      rate: Number((b.throughput.per_second / a.throughput.per_second).toFixed(3)),
      cpu: Number((b.own_cpu_ms.total / a.own_cpu_ms.total).toFixed(3)),
      machine_cpu: Number((b.machine_cpu_ms.total / a.machine_cpu_ms.total).toFixed(3)),
    };
  });
  const rate = Number(h.median(paired.map((p) => p.rate)).toFixed(3));
  const cpu = Number(h.median(paired.map((p) => p.cpu)).toFixed(3));
  return {
    A: perBuild('A'),
    B: perBuild('B'),
    b_over_a: {
      by_round: paired,
      rate: { median: rate, range: h.spread(paired.map((p) => p.rate)) },
      cpu: { median: cpu, range: h.spread(paired.map((p) => p.cpu)) },
      machine_cpu: { median: Number(h.median(paired.map((p) => p.machine_cpu)).toFixed(3)), range: h.spread(paired.map((p) => p.machine_cpu)) },
    },
    within_bound: { cpu: cpu <= WEBHOOKS.bound.max_cpu_ratio, rate: rate >= WEBHOOKS.bound.min_rate_ratio },
  };
}

async function main() {
  const args = process.argv.slice(2);
  const mode = args[0] === '--webhooks' ? args.shift() : null;
  const [distA, distB] = args.map((d) => path.resolve(d));
  if (!distA || !distB) throw new Error('usage: node bench/compare-builds.js [--webhooks] <distA> <distB>');
  if (mode) await webhooks(distA, distB);
  else await me(distA, distB);
}

h.runMain(main, { tag: 'compare', giveUpMinutes: process.argv.includes('--webhooks') ? null : 10, exit: true });
