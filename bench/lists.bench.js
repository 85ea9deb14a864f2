#!/usr/bin/env node
// List latency as data grows: GET /v1/cases and GET /v1/conversations, first page and deep pages,
// at 10,000 and at 1,000,000 cases in one organisation (one conversation per case). Sequential
// requests over one keep-alive HTTPS connection against the built api (`npm run build` first).
// Loopback only; a dedicated database it drops and recreates; it stops by itself and kills its
// children on the way out. See bench/README.md.
'use strict';
const lib = require('./lib');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { cursorAfter, explain, grow } = require('./lists-data');

const { root, withDb } = lib;
const work = path.join(root, '.data', 'bench-lists');
/** The build to run (default dist/); BENCH_DIST points at a copy when dist/ is being rebuilt meanwhile. */
const distDir = path.resolve(root, process.env.BENCH_DIST || 'dist');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_lists';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
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
const say = (msg) => process.stdout.write(`[bench:lists] ${msg}\n`);
const { sleep } = lib;

function env(extra = {}) {
  return {
    ...process.env,
    NODE_ENV: SETTINGS.api_node_env,
    LOG_LEVEL: SETTINGS.api_log_level,
    HOST,
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    AUTH_CACHE_TTL_SECONDS: '60',
    // Buckets no load here can empty: the bench measures the rate limit's cost (a Redis script call per busy bucket per turn), never its 429s.
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '10000000',
    SCIM_RATE_LIMIT_PER_SECOND: '1000000',
    SCIM_RATE_LIMIT_BURST: '10000000',
    DATA_DIR: work,
    BENCH_DIST: distDir,
    ...extra,
  };
}

const admin = (args) => lib.admin(args, { dist: distDir, env: env(), timeout: 120000 });

/** A self-signed certificate for the api (production mode wants TLS files). */
const ensureCert = () => lib.ensureCert(work, HOST);

const agent = lib.keepAliveAgent(1);
const get = (port, pathAndQuery, headers) => lib.request({ port, path: pathAndQuery, headers, agent, timeout: 10000 });

async function getJson(port, url, headers) {
  const res = await get(port, url, headers);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
  return JSON.parse(res.body);
}

const waitReady = (proc, port) =>
  lib.waitReady('the api', proc, async () => {
    const res = await get(port, '/health/ready', {}).catch(() => null);
    return res && res.status === 200;
  });

/** Every answer must be a full page with a next_cursor: anything else makes the numbers meaningless. */
function check(url, res) {
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
  const body = JSON.parse(res.body);
  if (body.data.length !== SETTINGS.page_size || !body.next_cursor) throw new Error(`GET ${url} did not answer a full page`);
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
      lists[list][t.page] = lib.summariseMs(t.times);
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
    lines.push(
      `| GET /v1/${c.list} | ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_target ? 'yes' : '**no**'} |`,
    );
  }
  lines.push('', `Data set up in ${small.insert_s} s and ${large.insert_s} s (insert + VACUUM ANALYZE).`);
  for (const list of LISTS) {
    const plans = report.sizes.map((z) => `${z.lists[list].middle_plan.execution_ms} ms at ${z.cases.toLocaleString('en')}`).join(', ');
    const plan = report.middle_plans[list];
    lines.push(`Middle page of ${list}: ${plan.node} on ${plan.index} (${plan.rows_removed_by_filter} rows removed by filter); time in Postgres ${plans}.`);
  }
  lines.push(
    '',
    `Target (p50 at ${large.cases.toLocaleString('en')} within ${TARGET_RATIO}× of p50 at ${small.cases.toLocaleString('en')}, every row): **${report.target_met ? 'met' : 'not met'}**.`,
    '',
  );
  return lines.join('\n');
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be noisy`);
  if (!fs.existsSync(path.join(distDir, 'apps/api/src/cases/cases.module.js'))) throw new Error(`${distDir} is missing or old: run \`npm run build\` first`);
  await lib.recreateDatabase(server, DB_NAME);
  const tenant = lib.makeTenant(admin, { org: 'bench lists', connection: 'bench lists' });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId} with a key`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const port = await lib.freePort(HOST);
  const api = lib.start('api', [path.join(__dirname, 'lists-api.js')], env({ ...(await ensureCert()), PORT: String(port), METRICS_PORT: '0' }));
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
    await lib.stop(api);
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
    commit: lib.gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), ...lib.machine() },
    settings: SETTINGS,
    sizes,
    comparison,
    middle_plans: { cases: large.lists.cases.middle_plan, conversations: large.lists.conversations.middle_plan },
    target: { max_p50_ratio: TARGET_RATIO },
    target_met: comparison.every((c) => c.within_target),
  };
  const md = markdown(report);
  lib.writeResults('lists', report, md, 'List latency as data grows');
  process.stdout.write(`\n${md}\nwritten: bench/results/lists.json, bench/results/lists.md\n`);
  say(`p50 at ${large.cases} cases within ${TARGET_RATIO}× of p50 at ${small.cases}: ${report.target_met ? 'yes' : 'NO'}`);
}

lib.runMain(main, {
  tag: 'bench:lists',
  giveUpMinutes: 20,
  cleanup: () => {
    agent.destroy();
    return lib.stopAll();
  },
});
