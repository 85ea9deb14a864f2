#!/usr/bin/env node
// List latency as data grows: GET /v1/cases and GET /v1/conversations, first page and deep pages,
// at 10,000 and at 1,000,000 cases in one organisation (one conversation per case). Sequential
// requests over one keep-alive HTTPS connection against the built api (`npm run build` first).
// Loopback only; a dedicated database it drops and recreates; it stops by itself and kills its
// children on the way out. See bench/README.md.
'use strict';
const lib = require('./lib');
const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { Client } = require('pg');
const { cursorAfter, explain, grow, makeTenant, recreateDatabase } = require('./lists-data');

const root = path.resolve(__dirname, '..');
const work = path.join(root, '.data', 'bench-lists');
const resultsDir = path.join(__dirname, 'results');
/** The build to run (default dist/); BENCH_DIST points at a copy when dist/ is being rebuilt meanwhile. */
const distDir = path.resolve(root, process.env.BENCH_DIST || 'dist');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_lists';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const withDb = (url, name) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();
const SETTINGS = {
  sizes: (process.env.BENCH_LISTS_SIZES || '10000,1000000').split(',').map(Number),
  conversations_per_case: 1,
  requests: Number(process.env.BENCH_LISTS_REQUESTS || 300),
  warmup: Number(process.env.BENCH_LISTS_WARMUP || 200),
  page_size: 25,
  follow_pages: 50,
  keep_alive: true,
  concurrency: 1,
  api_node_env: 'production',
  api_log_level: 'warn',
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchlists',
  quiet_load: Number(process.env.BENCH_LISTS_QUIET_LOAD || 1.5),
  quiet_wait_s: Number(process.env.BENCH_LISTS_QUIET_WAIT || 300),
};
const TARGET_RATIO = 1.5;
const PAGES = ['first', `page ${SETTINGS.follow_pages}`, 'middle'];
const LISTS = ['cases', 'conversations'];
const children = new Set();
const say = (msg) => process.stdout.write(`[bench:lists] ${msg}\n`);
const { sleep } = lib;

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, HOST, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function env(extra = {}) {
  return {
    ...process.env, NODE_ENV: SETTINGS.api_node_env, LOG_LEVEL: SETTINGS.api_log_level, HOST,
    DATABASE_URL: SETTINGS.database_url, REDIS_URL: SETTINGS.redis_url, REDIS_PREFIX: SETTINGS.redis_prefix,
    AUTH_CACHE_TTL_SECONDS: '60', DATA_DIR: work, BENCH_DIST: distDir, ...extra,
  };
}

function admin(args) {
  const r = spawnSync(process.execPath, [path.join(distDir, 'apps/admin/src/main.js'), ...args, '--json'], { cwd: root, env: env(), encoding: 'utf8', timeout: 120000 });
  if (r.status !== 0) throw new Error(`admin ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const line = r.stdout.trim().split('\n').reverse().find((l) => l.startsWith('{'));
  if (!line) throw new Error(`admin ${args.join(' ')} printed no JSON:\n${r.stdout}`);
  return JSON.parse(line);
}

/** A self-signed certificate for the api (production mode wants TLS files). */
const ensureCert = () => lib.ensureCert(work, HOST);


const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false, servername: 'localhost' });

function get(port, pathAndQuery, headers) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = https.get({ host: HOST, port, path: pathAndQuery, headers, agent, timeout: 10000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
    });
    req.on('timeout', () => req.destroy(new Error(`timeout on ${pathAndQuery}`)));
    req.on('error', reject);
  });
}

async function getJson(port, url, headers) {
  const res = await get(port, url, headers);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
  return JSON.parse(res.body);
}

function start(args, extraEnv) {
  const proc = spawn(process.execPath, args, { cwd: root, env: env(extraEnv), stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [proc.stdout, proc.stderr]) readline.createInterface({ input: s }).on('line', (l) => process.stdout.write(`[api] ${l}\n`));
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

async function waitReady(proc, port) {
  for (const until = Date.now() + 60000; Date.now() < until; await sleep(200)) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error('the api exited before it was ready');
    const res = await get(port, '/health/ready', {}).catch(() => null);
    if (res && res.status === 200) return;
  }
  throw new Error('the api was not ready after 60 s');
}

const { quantile } = lib;

/** Every answer must be a full page with a next_cursor: anything else makes the numbers meaningless. */
function check(url, res) {
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
  const body = JSON.parse(res.body);
  if (body.data.length !== SETTINGS.page_size || !body.next_cursor) throw new Error(`GET ${url} did not answer a full page`);
}

function summarise(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const r = (x) => +x.toFixed(2);
  return { p50_ms: r(quantile(sorted, 0.5)), p99_ms: r(quantile(sorted, 0.99)), mean_ms: r(sorted.reduce((a, b) => a + b, 0) / sorted.length), max_ms: r(sorted[sorted.length - 1]) };
}

/** The URLs of one list at the current size: first page, 50 pages deep by next_cursor, and the middle row. */
async function listUrls(db, port, headers, tenant, list, size) {
  const base = `/v1/${list}?limit=${SETTINGS.page_size}`;
  let cursor = null;
  for (let i = 0; i < SETTINGS.follow_pages; i++) cursor = (await getJson(port, `${base}${cursor ? `&cursor=${cursor}` : ''}`, headers)).next_cursor;
  const middle = await cursorAfter(db, list, tenant.organisationId, Math.floor(size / 2));
  return { first: base, [PAGES[1]]: `${base}&cursor=${cursor}`, middle: `${base}&cursor=${middle}`, middleCursor: middle };
}

/**
 * Warm-up (discarded), then `requests` rounds that call each of the six URLs once in turn, so
 * that a change of load on the machine during the phase weighs on every row alike.
 */
async function measurePhase(db, port, headers, tenant, size) {
  const urls = {};
  for (const list of LISTS) urls[list] = await listUrls(db, port, headers, tenant, list, size);
  const targets = LISTS.flatMap((list) => PAGES.map((page) => ({ list, page, url: urls[list][page], times: [] })));
  for (let i = 0; i < SETTINGS.warmup; i++) for (const t of targets) check(t.url, await get(port, t.url, headers));
  for (let i = 0; i < SETTINGS.requests; i++) {
    for (const t of targets) {
      const res = await get(port, t.url, headers);
      check(t.url, res);
      t.times.push(res.ms);
    }
  }
  const lists = {};
  for (const list of LISTS) {
    lists[list] = {};
    for (const t of targets.filter((x) => x.list === list)) {
      lists[list][t.page] = summarise(t.times);
      say(`${size} cases, GET /v1/${list} ${t.page}: p50 ${lists[list][t.page].p50_ms} ms, p99 ${lists[list][t.page].p99_ms} ms`);
    }
    lists[list].middle.rows_before = Math.floor(size / 2);
    lists[list].middle_plan = await explain(db, list, tenant.organisationId, urls[list].middleCursor, SETTINGS.page_size);
  }
  return lists;
}

/** Waits (bounded) for the machine to calm down, so that other work does not drown the numbers. */
async function waitForQuiet() {
  const until = Date.now() + SETTINGS.quiet_wait_s * 1000;
  while (os.loadavg()[0] > SETTINGS.quiet_load && Date.now() < until) await sleep(5000);
  const load = +os.loadavg()[0].toFixed(2);
  if (load > SETTINGS.quiet_load) say(`warning: load average still ${load}; measuring anyway (the numbers will be noisy)`);
  return load;
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function markdown(report) {
  const [small, large] = report.sizes;
  const lines = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}; load average (1 min) before measuring: ${small.load_average_1m_before} at ${small.cases.toLocaleString('en')}, ${large.load_average_1m_before} at ${large.cases.toLocaleString('en')}.`,
    `One organisation, one conversation per case; ${SETTINGS.requests} sequential requests per row after ${SETTINGS.warmup} warm-up, the six URLs of a size called in turn, one keep-alive HTTPS connection, limit ${SETTINGS.page_size}; api NODE_ENV=${SETTINGS.api_node_env}, LOG_LEVEL=${SETTINGS.api_log_level}, local Postgres and Redis.`,
    `"page ${SETTINGS.follow_pages}" follows next_cursor ${SETTINGS.follow_pages} pages deep; "middle" starts at the middle row of the list (cursor built from a known row).`,
    '',
    `| list | page | p50 ms at ${small.cases.toLocaleString('en')} | p99 ms at ${small.cases.toLocaleString('en')} | p50 ms at ${large.cases.toLocaleString('en')} | p99 ms at ${large.cases.toLocaleString('en')} | p50 ratio | within ${TARGET_RATIO}× |`,
    '|---|---|---:|---:|---:|---:|---:|---|',
  ];
  for (const c of report.comparison) {
    lines.push(`| GET /v1/${c.list} | ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_target ? 'yes' : '**no**'} |`);
  }
  lines.push('', `Data set up in ${small.insert_s} s and ${large.insert_s} s (insert + VACUUM ANALYZE).`);
  for (const list of LISTS) {
    const plans = report.sizes.map((z) => `${z.lists[list].middle_plan.execution_ms} ms at ${z.cases.toLocaleString('en')}`).join(', ');
    const plan = report.middle_plans[list];
    lines.push(`Middle page of ${list}: ${plan.node} on ${plan.index} (${plan.rows_removed_by_filter} rows removed by filter); time in Postgres ${plans}.`);
  }
  lines.push('', `Target (p50 at ${large.cases.toLocaleString('en')} within ${TARGET_RATIO}× of p50 at ${small.cases.toLocaleString('en')}, every row): **${report.target_met ? 'met' : 'not met'}**.`, '');
  return lines.join('\n');
}

function writeResults(report) {
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(path.join(resultsDir, 'lists.json'), `${JSON.stringify(report, null, 2)}\n`);
  const md = markdown(report);
  fs.writeFileSync(path.join(resultsDir, 'lists.md'), `# List latency as data grows\n\n${md}`);
  const readme = path.join(__dirname, 'README.md');
  const [open, close] = ['<!-- lists:results:start -->', '<!-- lists:results:end -->'];
  const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : '';
  if (text.includes(open) && text.includes(close)) {
    fs.writeFileSync(readme, `${text.slice(0, text.indexOf(open) + open.length)}\n${md}${text.slice(text.indexOf(close))}`);
  }
  return md;
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be noisy`);
  if (!fs.existsSync(path.join(distDir, 'apps/api/src/cases/cases.module.js'))) throw new Error(`${distDir} is missing or old: run \`npm run build\` first`);
  await recreateDatabase(server, DB_NAME);
  const tenant = makeTenant(admin);
  say(`created ${DB_NAME} (${tenant.migrations} migrations), organisation ${tenant.organisationId} with a key`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const port = await freePort();
  const api = start([path.join(__dirname, 'lists-api.js')], { ...(await ensureCert()), PORT: String(port) });
  const headers = { authorization: `Bearer ${tenant.key}` };
  const sizes = [];
  try {
    await waitReady(api, port);
    let have = 0;
    for (const size of SETTINGS.sizes) {
      say(`growing to ${size} cases…`);
      const grown = await grow(db, tenant.organisationId, have + 1, size);
      say(`organisation holds ${grown.cases} cases and ${grown.conversations} conversations (inserted and analysed in ${grown.insert_s} s)`);
      have = size;
      const loadBefore = await waitForQuiet();
      const lists = await measurePhase(db, port, headers, tenant, size);
      sizes.push({ ...grown, load_average_1m_before: loadBefore, load_average_1m_after: +os.loadavg()[0].toFixed(2), lists });
    }
  } finally {
    await db.end();
    await stop(api);
  }
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  const comparison = [];
  for (const list of LISTS) {
    for (const page of PAGES) {
      const ratio = +(large.lists[list][page].p50_ms / small.lists[list][page].p50_ms).toFixed(2);
      comparison.push({ list, page, small: small.lists[list][page], large: large.lists[list][page], p50_ratio: ratio, within_target: ratio <= TARGET_RATIO });
    }
  }
  const report = {
    benchmark: 'GET /v1/cases and GET /v1/conversations as data grows (HTTPS, sequential, keep-alive)',
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), node: process.version, cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model.trim(), memory_gib: Math.round(os.totalmem() / 2 ** 30) },
    settings: SETTINGS,
    sizes,
    comparison,
    middle_plans: { cases: large.lists.cases.middle_plan, conversations: large.lists.conversations.middle_plan },
    target: { max_p50_ratio: TARGET_RATIO },
    target_met: comparison.every((c) => c.within_target),
  };
  process.stdout.write(`\n${writeResults(report)}\nwritten: bench/results/lists.json, bench/results/lists.md\n`);
  say(`p50 at ${large.cases} cases within ${TARGET_RATIO}× of p50 at ${small.cases}: ${report.target_met ? 'yes' : 'NO'}`);
}

async function cleanup() {
  agent.destroy();
  await Promise.all([...children].map(stop));
}

process.on('exit', () => children.forEach((p) => p.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().then(() => process.exit(130)));
setTimeout(() => {
  say('gave up after 20 minutes');
  cleanup().then(() => process.exit(1));
}, 20 * 60_000).unref();

main().then(
  () => cleanup(),
  (err) => {
    process.stderr.write(`[bench:lists] FAILED: ${err.stack ?? err}\n`);
    return cleanup().then(() => process.exit(1));
  },
);
