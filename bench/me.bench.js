#!/usr/bin/env node
// Authenticated GET /v1/me over HTTPS, measured with autocannon beside two references started in
// the same run: a bare node:https server (the physical limit) and a bare NestJS 11 app (the
// framework's ceiling). Run with `npm run bench:me` (builds first); see bench/README.md.
// Loopback only; it stops by itself and kills its children on the way out.
'use strict';
const lib = require('./lib');
const autocannon = require('autocannon');
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const root = path.resolve(__dirname, '..');
const work = path.join(root, '.data', 'bench');
const resultsDir = path.join(__dirname, 'results');
const HOST = '127.0.0.1';
const SETTINGS = {
  connections: Number(process.env.BENCH_CONNECTIONS || 50),
  duration_s: Number(process.env.BENCH_DURATION || 10),
  warmup_s: Number(process.env.BENCH_WARMUP || 3),
  rounds: Number(process.env.BENCH_ROUNDS || 5),
  pipelining: 1,
  keep_alive: true,
  api_log_level: 'warn',
  api_node_env: 'production',
  auth_cache_ttl_s: Number(process.env.AUTH_CACHE_TTL_SECONDS || 60),
  database_url: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench',
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabench',
};
const TARGET = { min_ratio_to_bare_nest: 0.75, max_p99_ms: 25 };
const children = new Set();

const say = (msg) => process.stdout.write(`[bench] ${msg}\n`);
const { sleep } = lib;

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** One self-signed certificate for all three targets, made like the api's own (tls.ts). */
const ensureCert = () => lib.ensureCert(work, HOST);

function apiEnv(extra = {}) {
  return {
    ...process.env, NODE_ENV: SETTINGS.api_node_env, LOG_LEVEL: SETTINGS.api_log_level, HOST,
    DATABASE_URL: SETTINGS.database_url, REDIS_URL: SETTINGS.redis_url, REDIS_PREFIX: SETTINGS.redis_prefix,
    AUTH_CACHE_TTL_SECONDS: String(SETTINGS.auth_cache_ttl_s), DATA_DIR: work, ...extra,
  };
}

function admin(args, env) {
  const r = spawnSync(process.execPath, ['dist/apps/admin/src/main.js', ...args, '--json'], { cwd: root, env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`admin ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const line = r.stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) throw new Error(`admin ${args.join(' ')} printed no JSON:\n${r.stdout}`);
  return JSON.parse(line);
}

/** Migrates the bench database and makes a fresh organisation, connection (all scopes) and key. */
function makeTenant(env) {
  const { applied = [] } = admin(['migrate'], env);
  say(`migrated ${SETTINGS.database_url}${applied.length ? ` (applied ${applied.join(', ')})` : ''}`);
  const stamp = new Date().toISOString();
  const org = admin(['org', 'create', '--name', `bench ${stamp}`], env);
  const conn = admin(['connection', 'create', '--org', org.id, '--name', 'bench', '--scopes', 'all'], env);
  const key = admin(['key', 'create', '--connection', conn.id], env);
  return { organisationId: org.id, connectionId: conn.id, keyId: key.id, key: key.key };
}

function start(name, args, env) {
  const proc = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [proc.stdout, proc.stderr]) readline.createInterface({ input: s }).on('line', (l) => process.stdout.write(`[${name}] ${l}\n`));
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return proc;
}

function stop(proc) {
  return new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10000);
    proc.once('exit', () => resolve(clearTimeout(timer)));
    proc.kill('SIGTERM');
  });
}

function get(url, headers = {}) {
  return new Promise((resolve) => {
    const req = https.get(url, { headers, rejectUnauthorized: false, servername: 'localhost', timeout: 3000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: Buffer.alloc(0) }));
  });
}

async function waitFor(name, proc, url, headers) {
  for (const until = Date.now() + 60000; Date.now() < until; await sleep(200)) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`${name} exited before it was ready`);
    const res = await get(url, headers);
    if (res.status === 200) return res;
  }
  throw new Error(`${name} was not ready at ${url} after 60 s`);
}

function cannon(url, headers, duration) {
  const opts = { url, headers, duration, connections: SETTINGS.connections, pipelining: SETTINGS.pipelining, servername: 'localhost' };
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

async function warmUp(target) {
  say(`${target.name}: warm-up ${SETTINGS.warmup_s} s…`);
  await cannon(target.url, target.headers, SETTINGS.warmup_s);
}

/** One measured run; any non-2xx answer, error or timeout fails the benchmark. */
async function measureOnce(target, round) {
  const r = await cannon(target.url, target.headers, SETTINGS.duration_s);
  const result = {
    round, rps: Math.round(r.requests.average), requests: r.requests.total,
    latency_ms: { p50: r.latency.p50, p99: r.latency.p99, mean: r.latency.average, max: r.latency.max },
    non_2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts,
  };
  say(`round ${round} ${target.name}: ${result.rps} req/s, p50 ${result.latency_ms.p50} ms, p99 ${result.latency_ms.p99} ms, non-2xx ${result.non_2xx}`);
  if (result.non_2xx > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(`${target.name} answered ${result.non_2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts: the numbers are not valid`);
  }
  return result;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A target's figure: the median over its rounds of each number (rounds are kept in the JSON). */
function summarise(runs) {
  return {
    rps: Math.round(median(runs.map((r) => r.rps))),
    latency_ms: { p50: median(runs.map((r) => r.latency_ms.p50)), p99: median(runs.map((r) => r.latency_ms.p99)) },
    non_2xx: runs.reduce((n, r) => n + r.non_2xx, 0),
    rounds: runs,
  };
}

async function startApiTarget(tls, tenant) {
  const port = await freePort();
  const proc = start('api', ['dist/apps/api/src/main.js'], apiEnv({ ...tls, PORT: String(port) }));
  await waitFor('api', proc, `https://${HOST}:${port}/health/ready`);
  const me = await get(`https://${HOST}:${port}/v1/me`, { authorization: `Bearer ${tenant.key}` });
  if (me.status !== 200) throw new Error(`GET /v1/me with the bench key answered ${me.status}: ${me.body}`);
  return { name: 'api', proc, port, body: me.body };
}

async function startReference(kind, tls, bodyFile, body) {
  const port = await freePort();
  const proc = start(kind, [path.join(__dirname, 'reference-servers.js'), kind], { ...process.env, ...tls, PORT: String(port), BODY_FILE: bodyFile });
  const first = await waitFor(kind, proc, `https://${HOST}:${port}/v1/me`);
  if (!first.body.equals(body)) throw new Error(`${kind} does not answer the api's body byte for byte`);
  return { name: kind, proc, port };
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function markdown(report) {
  const { targets: t, ratios, target_met: met, settings: s } = report;
  const pct = (x) => `${Math.round(x * 100)}%`;
  const row = (label, r, vsNest, vsNode) =>
    `| ${label} | ${r.rps} | ${r.latency_ms.p50} | ${r.latency_ms.p99} | ${r.non_2xx} | ${vsNest} | ${vsNode} |`;
  return [
    `- run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}, load average before ${report.machine.load_average_1m_before}`,
    `- ${s.connections} connections, pipelining ${s.pipelining}, HTTPS keep-alive; each target warmed up ${s.warmup_s} s, then ${s.rounds} rounds of ${s.duration_s} s per target in rotating order, one target at a time, load generator on the same machine; figures are medians over the rounds`,
    `- api: NODE_ENV=${s.api_node_env}, LOG_LEVEL=${s.api_log_level}, AUTH_CACHE_TTL_SECONDS=${s.auth_cache_ttl_s}, local Postgres and Redis`,
    '',
    '| target | req/s (median of rounds) | p50 ms | p99 ms | non-2xx | vs bare Nest | vs bare node |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('bare node:https', t.bare_node, pct(t.bare_node.rps / t.bare_nest.rps), '100%'),
    row('bare NestJS 11 (express, no guard)', t.bare_nest, '100%', pct(t.bare_nest.rps / t.bare_node.rps)),
    row('**api** (bearer guard + GET /v1/me)', t.api, pct(ratios.api_to_bare_nest), pct(ratios.api_to_bare_node)),
    '',
    `api ÷ bare Nest, round by round: ${ratios.api_to_bare_nest_by_round.map(pct).join(', ')}.`,
    '',
    `Target (api ≥ ${pct(TARGET.min_ratio_to_bare_nest)} of bare Nest req/s and p99 < ${TARGET.max_p99_ms} ms): **${met ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
}

/** Writes the results and copies the table into bench/README.md between its markers. */
function writeResults(report) {
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(path.join(resultsDir, 'me.json'), `${JSON.stringify(report, null, 2)}\n`);
  const md = markdown(report);
  fs.writeFileSync(path.join(resultsDir, 'me.md'), `# GET /v1/me benchmark\n\n${md}`);
  const readme = path.join(__dirname, 'README.md');
  const [open, close] = ['<!-- me:results:start -->', '<!-- me:results:end -->'];
  const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : '';
  if (text.includes(open) && text.includes(close)) {
    fs.writeFileSync(readme, `${text.slice(0, text.indexOf(open) + open.length)}\n${md}${text.slice(text.indexOf(close))}`);
  }
  return md;
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be low and noisy`);
  if (!fs.existsSync(path.join(root, 'dist/apps/api/src/main.js'))) throw new Error('dist/ is missing: run `npm run bench:me` (it builds first)');
  const tls = await ensureCert();
  const tenant = makeTenant(apiEnv());
  // All three run for the whole benchmark (idle when not loaded); only one is under load at a time.
  const api = await startApiTarget(tls, tenant);
  const bodyFile = path.join(work, 'me-body.json');
  fs.writeFileSync(bodyFile, api.body);
  const targets = [api, await startReference('bare-nest', tls, bodyFile, api.body), await startReference('bare-node', tls, bodyFile, api.body)];
  for (const t of targets) Object.assign(t, { url: `https://${HOST}:${t.port}/v1/me`, headers: { authorization: `Bearer ${tenant.key}` } });
  for (const t of targets) await warmUp(t);
  // Rounds in a rotating order, so that a machine getting faster or slower during the run
  // (shared hosts do) weighs on every target alike instead of on whichever ran last.
  const runs = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (let round = 1; round <= SETTINGS.rounds; round++) {
    for (let i = 0; i < targets.length; i++) {
      const t = targets[(i + round - 1) % targets.length];
      runs[t.name].push(await measureOnce(t, round));
    }
  }
  await sleep(1000); // let requests still queued finish before anything shuts down
  const [apiR, nestR, nodeR] = ['api', 'bare-nest', 'bare-node'].map((n) => summarise(runs[n]));
  const ratios = {
    api_to_bare_nest: +(apiR.rps / nestR.rps).toFixed(3),
    api_to_bare_node: +(apiR.rps / nodeR.rps).toFixed(3),
    api_to_bare_nest_by_round: runs.api.map((r, i) => +(r.rps / runs['bare-nest'][i].rps).toFixed(3)),
  };
  const report = {
    benchmark: 'GET /v1/me (authenticated, HTTPS)',
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), node: process.version, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model.trim(), memory_gib: Math.round(os.totalmem() / 2 ** 30), platform: `${os.platform()} ${os.release()}` },
    settings: { ...SETTINGS, response_bytes: api.body.length, tls: 'self-signed RSA 2048, the same certificate for all three' },
    targets: { bare_node: nodeR, bare_nest: nestR, api: apiR },
    ratios,
    target: TARGET,
    target_met: ratios.api_to_bare_nest >= TARGET.min_ratio_to_bare_nest && apiR.latency_ms.p99 < TARGET.max_p99_ms,
  };
  process.stdout.write(`\n${writeResults(report)}\nwritten: bench/results/me.json, bench/results/me.md\n`);
}

async function cleanup() {
  await Promise.all([...children].map(stop));
}

process.on('exit', () => children.forEach((p) => p.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().then(() => process.exit(130)));
setTimeout(() => {
  say('gave up after 5 minutes');
  cleanup().then(() => process.exit(1));
}, 5 * 60_000).unref();

main().then(
  () => cleanup(),
  (err) => {
    process.stderr.write(`[bench] FAILED: ${err.stack ?? err}\n`);
    return cleanup().then(() => process.exit(1));
  },
);
