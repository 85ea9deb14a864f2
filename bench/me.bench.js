#!/usr/bin/env node
// Authenticated GET /v1/me over HTTPS (autocannon, keep-alive) against the api and two references
// started in the same run: bare node:https (the physical limit) and bare NestJS 11 (the framework's
// ceiling), both from bench/reference-servers.js answering the api's exact bytes. The api runs
// twice, at LOG_LEVEL=info (the row the target is read on) and at warn. Every target is warmed up,
// then loaded in short slices that alternate between the targets in a rotating order, round after
// round; per target: req/s, p50/p99 and the CPU a request costs its process (from /proc). Afterwards
// the info api's log is read back to check that every answered call has its request line.
//   npm run bench:me    (builds dist/ first, then node bench/me.bench.js)
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');
const { meTenant, settings, startMeApi, work } = require('./me-api');

const HOST = '127.0.0.1';
const SETTINGS = {
  connections: Number(process.env.BENCH_CONNECTIONS || 50),
  duration_s: Number(process.env.BENCH_DURATION || 10),
  warmup_s: Number(process.env.BENCH_WARMUP || 3),
  rounds: Number(process.env.BENCH_ROUNDS || 5),
  slice_s: Number(process.env.BENCH_SLICE || 5),
  pipelining: 1,
  keep_alive: true,
  api_log_level: 'info',
  api_beside_log_level: 'warn',
  api_node_env: settings.node_env,
  auth_cache_ttl_s: Number(process.env.AUTH_CACHE_TTL_SECONDS || 60),
  database_url: settings.database_url,
  redis_url: settings.redis_url,
  redis_prefix: settings.redis_prefix,
};
const TARGET = { min_ratio_to_bare_nest: 0.85, max_p99_ms: 25 };
const dist = h.distFrom();
const say = h.sayer('bench');

const cannon = (target, duration) =>
  h.cannon({ url: target.url, headers: target.headers, duration, connections: SETTINGS.connections, pipelining: SETTINGS.pipelining });

/** One measured slice, with the CPU its target used; any non-2xx answer, error or timeout fails the benchmark. */
async function measureSlice(target) {
  const cpuBefore = h.cpuMs(target.proc.pid);
  const r = await cannon(target, SETTINGS.slice_s);
  r.cpu_ms = h.cpuMs(target.proc.pid) - cpuBefore;
  if (r.non2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    throw new Error(`${target.name} answered ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts: the numbers are not valid`);
  }
  target.answers += r['2xx'];
  return r;
}

/** A target's round: its slices' requests over their time; latencies are the median of the slices'. */
function combineSlices(target, round, slices) {
  const requests = slices.reduce((n, r) => n + r.requests.total, 0);
  const seconds = slices.reduce((n, r) => n + r.duration, 0);
  const result = {
    round,
    rps: Math.round(requests / seconds),
    requests,
    seconds: +seconds.toFixed(2),
    slices: slices.length,
    cpu_us_per_request: Math.round((slices.reduce((n, r) => n + r.cpu_ms, 0) * 1000) / requests),
    latency_ms: {
      p50: h.median(slices.map((r) => r.latency.p50)),
      p99: h.median(slices.map((r) => r.latency.p99)),
      mean: +(slices.reduce((n, r) => n + r.latency.average * r.requests.total, 0) / requests).toFixed(2),
      max: Math.max(...slices.map((r) => r.latency.max)),
    },
    non_2xx: 0,
    errors: 0,
    timeouts: 0,
  };
  say(
    `round ${round} ${target.name}: ${result.rps} req/s, p50 ${result.latency_ms.p50} ms, p99 ${result.latency_ms.p99} ms, ${result.cpu_us_per_request} µs CPU/request`,
  );
  return result;
}

/** A target's figure: the median over its rounds of each number (rounds are kept in the JSON). */
const summarise = (runs) => ({
  rps: Math.round(h.median(runs.map((r) => r.rps))),
  cpu_us_per_request: h.median(runs.map((r) => r.cpu_us_per_request)),
  latency_ms: { p50: h.median(runs.map((r) => r.latency_ms.p50)), p99: h.median(runs.map((r) => r.latency_ms.p99)) },
  non_2xx: runs.reduce((n, r) => n + r.non_2xx, 0),
  rounds: runs,
});

/** The api at `level`, checked to answer GET /v1/me with the bench key. */
async function startApiTarget(name, level, tls, tenant) {
  const api = await startMeApi(name, { dist, logLevel: level, authCacheTtl: SETTINGS.auth_cache_ttl_s, tls, logFile: `me-${name}.log` });
  const me = await h.request({ port: api.port, path: '/v1/me', headers: { authorization: `Bearer ${tenant.key}` }, timeout: 3000 });
  if (me.status !== 200) throw new Error(`GET /v1/me with the bench key answered ${me.status}: ${me.body}`);
  return { name, ...api, body: me.body, level, answers: 1 }; // answers: 2xx GET /v1/me so far
}

/** A reference server of bench/reference-servers.js, checked to answer the api's body byte for byte. */
async function startReference(kind, tls, bodyFile, body) {
  const port = await h.freePort(HOST);
  const proc = h.start(kind, [path.join(__dirname, 'reference-servers.js'), kind], { ...process.env, ...tls, PORT: String(port), BODY_FILE: bodyFile });
  const first = await h.waitHttpReady(kind, proc, port, { path: '/v1/me' });
  if (!first.body.equals(body)) throw new Error(`${kind} does not answer the api's body byte for byte`);
  return { name: kind, proc, port, answers: 0 };
}

/** The `GET /v1/me` request lines in an api's log file (read after the api has stopped and flushed). */
function requestLinesIn(file) {
  let n = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) if (line.includes('"request completed"') && line.includes('"path":"/v1/me"')) n++;
  return n;
}

async function main() {
  const load = h.loadBefore(say);
  h.requireBuilds([dist], ['api', 'admin']);
  const tls = await h.ensureCert(work, HOST);
  const tenant = meTenant(dist, `bench ${new Date().toISOString()}`);
  say(`migrated ${SETTINGS.database_url}${tenant.applied.length ? ` (applied ${tenant.applied.join(', ')})` : ''}`);
  // All four run for the whole benchmark (idle when not loaded); only one is under load at a time.
  const api = await startApiTarget('api', SETTINGS.api_log_level, tls, tenant);
  const apiBeside = await startApiTarget(`api-${SETTINGS.api_beside_log_level}`, SETTINGS.api_beside_log_level, tls, tenant);
  const bodyFile = path.join(work, 'me-body.json');
  fs.writeFileSync(bodyFile, api.body);
  const targets = [api, apiBeside, await startReference('bare-nest', tls, bodyFile, api.body), await startReference('bare-node', tls, bodyFile, api.body)];
  for (const t of targets) Object.assign(t, { url: `https://${HOST}:${t.port}/v1/me`, headers: { authorization: `Bearer ${tenant.key}` } });
  for (const t of targets) {
    say(`${t.name}: warm-up ${SETTINGS.warmup_s} s…`);
    t.answers += (await cannon(t, SETTINGS.warmup_s))['2xx'];
  }
  // Each round gives every target duration_s of load in slices of slice_s, the targets in a rotating order.
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  const slicesPerRound = Math.max(1, Math.round(SETTINGS.duration_s / SETTINGS.slice_s));
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    const parts = Object.fromEntries(targets.map((t) => [t.name, []]));
    for (let k = 0; k < slicesPerRound; k++) for (const t of h.rotated(targets, k + round - 1)) parts[t.name].push(await measureSlice(t));
    for (const t of targets) runs[t.name].push(combineSlices(t, round, parts[t.name]));
  }
  await h.sleep(1000); // let requests still queued finish before anything shuts down
  // Every answer the info api gave (warm-up and slices) must have its request line in its log, read once it has stopped (SIGTERM flushes it).
  await h.stop(api.proc);
  const requestLines = { answered: api.answers, logged: requestLinesIn(api.log) };
  const [apiR, besideR, nestR, nodeR] = ['api', apiBeside.name, 'bare-nest', 'bare-node'].map((n) => summarise(runs[n]));
  const byRound = (name) => runs[name].map((r, i) => +(r.rps / runs['bare-nest'][i].rps).toFixed(3));
  const ratios = {
    api_to_bare_nest: +(apiR.rps / nestR.rps).toFixed(3),
    api_to_bare_node: +(apiR.rps / nodeR.rps).toFixed(3),
    api_to_bare_nest_by_round: byRound('api'),
    api_beside_to_bare_nest: +(besideR.rps / nestR.rps).toFixed(3),
    api_beside_to_bare_nest_by_round: byRound(apiBeside.name),
  };
  const report = {
    benchmark: 'GET /v1/me (authenticated, HTTPS)',
    date: new Date().toISOString(),
    commit: h.gitCommit(),
    machine: { load_average_1m_before: load, ...h.machine(), platform: `${os.platform()} ${os.release()}` },
    settings: { ...SETTINGS, response_bytes: api.body.length, tls: 'self-signed RSA 2048, the same certificate for all three' },
    targets: { bare_node: nodeR, bare_nest: nestR, api: apiR, api_beside: besideR },
    request_lines: requestLines,
    ratios,
    target: TARGET,
    target_met: ratios.api_to_bare_nest >= TARGET.min_ratio_to_bare_nest && apiR.latency_ms.p99 < TARGET.max_p99_ms,
  };
  process.stdout.write(`\n${writeReport('me', report)}\n`);
}

h.runMain(main, { tag: 'bench', giveUpMinutes: 5 });
