#!/usr/bin/env node
// Authenticated GET /v1/me over HTTPS, measured with autocannon beside two references started in
// the same run: a bare node:https server (the physical limit) and a bare NestJS 11 app (the
// framework's ceiling). Run with `npm run bench:me` (builds first); see bench/README.md.
// Loopback only; it stops by itself and kills its children on the way out.
'use strict';
const lib = require('./lib');
const autocannon = require('autocannon');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { root } = lib;
const work = path.join(root, '.data', 'bench');
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
  api_node_env: 'production',
  auth_cache_ttl_s: Number(process.env.AUTH_CACHE_TTL_SECONDS || 60),
  database_url: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench',
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabench',
};
const TARGET = { min_ratio_to_bare_nest: 0.85, max_p99_ms: 25 };

const say = (msg) => process.stdout.write(`[bench] ${msg}\n`);
const { sleep } = lib;

/** One self-signed certificate for all three targets, made like the api's own (tls.ts). */
const ensureCert = () => lib.ensureCert(work, HOST);

function apiEnv(extra = {}) {
  return {
    ...process.env,
    NODE_ENV: SETTINGS.api_node_env,
    LOG_LEVEL: SETTINGS.api_log_level,
    HOST,
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    AUTH_CACHE_TTL_SECONDS: String(SETTINGS.auth_cache_ttl_s),
    // Buckets no load here can empty: the bench measures the rate limit's cost (a Redis script call per busy bucket per turn), never its 429s.
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '10000000',
    SCIM_RATE_LIMIT_PER_SECOND: '1000000',
    SCIM_RATE_LIMIT_BURST: '10000000',
    DATA_DIR: work,
    ...extra,
  };
}

/** The admin CLI of dist/ with the api's environment. */
const admin = (args) => lib.admin(args, { dist: path.join(root, 'dist'), env: apiEnv() });

/** Migrates the bench database and makes a fresh organisation, connection (all scopes) and key. */
function makeTenant() {
  const tenant = lib.makeTenant(admin, { org: `bench ${new Date().toISOString()}` });
  say(`migrated ${SETTINGS.database_url}${tenant.applied.length ? ` (applied ${tenant.applied.join(', ')})` : ''}`);
  return tenant;
}

/** GET over HTTPS; a socket error or timeout answers status 0. */
const get = (port, pathAndQuery, headers) =>
  lib.request({ port, path: pathAndQuery, headers, timeout: 3000 }).catch(() => ({ status: 0, body: Buffer.alloc(0) }));

/** Waits until GET `pathAndQuery` answers 200; answers that response. */
function waitFor(name, proc, port, pathAndQuery) {
  return lib.waitReady(
    name,
    proc,
    async () => {
      const res = await get(port, pathAndQuery);
      return res.status === 200 && res;
    },
    { at: `https://${HOST}:${port}${pathAndQuery}` },
  );
}

function cannon(url, headers, duration) {
  const opts = { url, headers, duration, connections: SETTINGS.connections, pipelining: SETTINGS.pipelining, servername: 'localhost' };
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

async function warmUp(target) {
  say(`${target.name}: warm-up ${SETTINGS.warmup_s} s…`);
  const r = await cannon(target.url, target.headers, SETTINGS.warmup_s);
  target.answers += r['2xx'];
}

/** One measured slice; any non-2xx answer, error or timeout fails the benchmark. */
async function measureSlice(target) {
  const cpuBefore = lib.cpuMs(target.proc.pid);
  const r = await cannon(target.url, target.headers, SETTINGS.slice_s);
  r.cpu_ms = lib.cpuMs(target.proc.pid) - cpuBefore;
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
      p50: median(slices.map((r) => r.latency.p50)),
      p99: median(slices.map((r) => r.latency.p99)),
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

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** A target's figure: the median over its rounds of each number (rounds are kept in the JSON). */
function summarise(runs) {
  return {
    rps: Math.round(median(runs.map((r) => r.rps))),
    cpu_us_per_request: median(runs.map((r) => r.cpu_us_per_request)),
    latency_ms: { p50: median(runs.map((r) => r.latency_ms.p50)), p99: median(runs.map((r) => r.latency_ms.p99)) },
    non_2xx: runs.reduce((n, r) => n + r.non_2xx, 0),
    rounds: runs,
  };
}

/**
 * The api at `level`; its stdout (the JSON log, one request line per call at info) goes to a file,
 * as a container runtime would take it, never through the load generator.
 */
async function startApiTarget(name, level, tls, tenant) {
  const port = await lib.freePort(HOST);
  const log = path.join(work, `me-${name}.log`);
  const proc = lib.start(name, ['dist/apps/api/src/main.js'], apiEnv({ ...tls, LOG_LEVEL: level, PORT: String(port), METRICS_PORT: '0' }), { stdoutFile: log });
  await waitFor(name, proc, port, '/health/ready');
  const me = await get(port, '/v1/me', { authorization: `Bearer ${tenant.key}` });
  if (me.status !== 200) throw new Error(`GET /v1/me with the bench key answered ${me.status}: ${me.body}`);
  return { name, proc, port, body: me.body, log, level, answers: 1 }; // answers: 2xx GET /v1/me so far
}

/** The `GET /v1/me` request lines in an api's log file (read after the api has stopped and flushed). */
function requestLinesIn(file) {
  let n = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) if (line.includes('"request completed"') && line.includes('"path":"/v1/me"')) n++;
  return n;
}

async function startReference(kind, tls, bodyFile, body) {
  const port = await lib.freePort(HOST);
  const proc = lib.start(kind, [path.join(__dirname, 'reference-servers.js'), kind], { ...process.env, ...tls, PORT: String(port), BODY_FILE: bodyFile });
  const first = await waitFor(kind, proc, port, '/v1/me');
  if (!first.body.equals(body)) throw new Error(`${kind} does not answer the api's body byte for byte`);
  return { name: kind, proc, port, answers: 0 };
}

function markdown(report) {
  const { targets: t, ratios, target_met: met, settings: s, request_lines: lines } = report;
  const pct = (x) => `${Math.round(x * 100)}%`;
  const row = (label, r, vsNest, vsNode) =>
    `| ${label} | ${r.rps} | ${r.latency_ms.p50} | ${r.latency_ms.p99} | ${r.non_2xx} | ${vsNest} | ${vsNode} | ${r.cpu_us_per_request} | ${pct(t.bare_nest.cpu_us_per_request / r.cpu_us_per_request)} |`;
  return [
    `- run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}, load average before ${report.machine.load_average_1m_before}`,
    `- ${s.connections} connections, pipelining ${s.pipelining}, HTTPS keep-alive; each target warmed up ${s.warmup_s} s, then ${s.rounds} rounds of ${s.duration_s} s per target, each cut in ${s.slice_s} s slices alternating between the targets in rotating order (one target under load at a time, load generator on the same machine); figures are medians over the rounds`,
    `- api: NODE_ENV=${s.api_node_env}, AUTH_CACHE_TTL_SECONDS=${s.auth_cache_ttl_s}, local Postgres and Redis, stdout to a file; measured at LOG_LEVEL=${s.api_log_level} (the level operators run: one JSON request line per call) and, beside it, at LOG_LEVEL=${s.api_beside_log_level} (no request lines)`,
    '',
    "| target | req/s (median of rounds) | p50 ms | p99 ms | non-2xx | vs bare Nest | vs bare node | CPU µs per request | bare Nest's CPU per request ÷ this one's |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('bare node:https', t.bare_node, pct(t.bare_node.rps / t.bare_nest.rps), '100%'),
    row('bare NestJS 11 (express, no guard)', t.bare_nest, '100%', pct(t.bare_nest.rps / t.bare_node.rps)),
    row(`**api** at ${s.api_log_level} (bearer guard + GET /v1/me + request line)`, t.api, pct(ratios.api_to_bare_nest), pct(ratios.api_to_bare_node)),
    row(`api at ${s.api_beside_log_level}`, t.api_beside, pct(ratios.api_beside_to_bare_nest), pct(t.api_beside.rps / t.bare_node.rps)),
    '',
    `api (${s.api_log_level}) ÷ bare Nest, round by round: ${ratios.api_to_bare_nest_by_round.map(pct).join(', ')}; api (${s.api_beside_log_level}) ÷ bare Nest: ${ratios.api_beside_to_bare_nest_by_round.map(pct).join(', ')}.`,
    "CPU per request is the server process's own user + system time during its slices (from /proc) over the requests it answered: the load generator and other work on the machine take CPU from whichever target is loaded, so req/s moves with them, while the CPU a request costs the server does not. Bare Nest's CPU per request ÷ a target's is the share of bare Nest's req/s it would reach with a core to itself.",
    `Request lines in the ${s.api_log_level} api's log for GET /v1/me: ${lines.logged} for ${lines.answered} answers (each one logged: ${lines.logged >= lines.answered ? 'yes' : 'NO'}; lines beyond the answers are requests still in flight when a slice's client stopped, answered and logged but not counted by it).`,
    '',
    `Target (api ≥ ${pct(TARGET.min_ratio_to_bare_nest)} of bare Nest req/s and p99 < ${TARGET.max_p99_ms} ms): **${met ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be low and noisy`);
  if (!fs.existsSync(path.join(root, 'dist/apps/api/src/main.js'))) throw new Error('dist/ is missing: run `npm run bench:me` (it builds first)');
  const tls = await ensureCert();
  const tenant = makeTenant();
  // All three run for the whole benchmark (idle when not loaded); only one is under load at a time.
  const api = await startApiTarget('api', SETTINGS.api_log_level, tls, tenant);
  const apiBeside = await startApiTarget(`api-${SETTINGS.api_beside_log_level}`, SETTINGS.api_beside_log_level, tls, tenant);
  const bodyFile = path.join(work, 'me-body.json');
  fs.writeFileSync(bodyFile, api.body);
  const targets = [api, apiBeside, await startReference('bare-nest', tls, bodyFile, api.body), await startReference('bare-node', tls, bodyFile, api.body)];
  for (const t of targets) Object.assign(t, { url: `https://${HOST}:${t.port}/v1/me`, headers: { authorization: `Bearer ${tenant.key}` } });
  for (const t of targets) await warmUp(t);
  // Each round gives every target duration_s of load, cut in slices of slice_s that alternate
  // between the targets in a rotating order: a shared host's speed drifts within seconds, and
  // this way every target meets the same drift instead of whichever ran in the slow stretch.
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  const slicesPerRound = Math.max(1, Math.round(SETTINGS.duration_s / SETTINGS.slice_s));
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    const parts = Object.fromEntries(targets.map((t) => [t.name, []]));
    for (let k = 0; k < slicesPerRound; k++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + k + round - 1) % targets.length];
        parts[t.name].push(await measureSlice(t));
      }
    }
    for (const t of targets) runs[t.name].push(combineSlices(t, round, parts[t.name]));
  }
  await sleep(1000); // let requests still queued finish before anything shuts down
  // Every answer the info api gave (warm-up and slices; autocannon counts 2xx answers in `2xx`) must
  // have its request line in the log, read once the api has stopped (SIGTERM: its log is flushed).
  await lib.stop(api.proc);
  const requestLines = { answered: api.answers, logged: requestLinesIn(api.log) };
  const [apiR, besideR, nestR, nodeR] = ['api', apiBeside.name, 'bare-nest', 'bare-node'].map((n) => summarise(runs[n]));
  const ratios = {
    api_to_bare_nest: +(apiR.rps / nestR.rps).toFixed(3),
    api_to_bare_node: +(apiR.rps / nodeR.rps).toFixed(3),
    api_to_bare_nest_by_round: runs.api.map((r, i) => +(r.rps / runs['bare-nest'][i].rps).toFixed(3)),
    api_beside_to_bare_nest: +(besideR.rps / nestR.rps).toFixed(3),
    api_beside_to_bare_nest_by_round: runs[apiBeside.name].map((r, i) => +(r.rps / runs['bare-nest'][i].rps).toFixed(3)),
  };
  const report = {
    benchmark: 'GET /v1/me (authenticated, HTTPS)',
    date: new Date().toISOString(),
    commit: lib.gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), ...lib.machine(), platform: `${os.platform()} ${os.release()}` },
    settings: { ...SETTINGS, response_bytes: api.body.length, tls: 'self-signed RSA 2048, the same certificate for all three' },
    targets: { bare_node: nodeR, bare_nest: nestR, api: apiR, api_beside: besideR },
    request_lines: requestLines,
    ratios,
    target: TARGET,
    target_met: ratios.api_to_bare_nest >= TARGET.min_ratio_to_bare_nest && apiR.latency_ms.p99 < TARGET.max_p99_ms,
  };
  const md = markdown(report);
  lib.writeResults('me', report, md, 'GET /v1/me benchmark'); // and the table into bench/README.md
  process.stdout.write(`\n${md}\nwritten: bench/results/me.json, bench/results/me.md\n`);
}

lib.runMain(main, { tag: 'bench', giveUpMinutes: 5 });
