#!/usr/bin/env node
// List latency as data grow: GET /v1/cases and GET /v1/conversations (limit 25) at 10,000 and at
// 1,000,000 cases in one organisation (one conversation per case, grown with SQL by
// bench/lists-data.js), each at three depths: the first page, page 50 reached by following
// next_cursor, and the middle of the list. Sequential requests over one keep-alive HTTPS connection,
// the six URLs of a size called in turn, against the built api (`npm run build` first); each size
// measured once the machine is quiet (bounded wait). Target: every p50 at the large size within
// 1.5× of its p50 at the small one. Also the plan Postgres chooses for the middle page.
'use strict';
const path = require('node:path');
const { Client } = require('pg');
const h = require('./harness');
const { cursorAfter, explain, grow } = require('./lists-data');
const { writeReport } = require('./markdown');

const work = h.workDir('bench-lists');
/** The build to run (default dist/); BENCH_DIST points at a copy when dist/ is being rebuilt meanwhile. */
const distDir = h.distFrom();
const DB_NAME = 'integrations_bench_lists';
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
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchlists',
  quiet_load: Number(process.env.BENCH_LISTS_QUIET_LOAD || 1.5),
  quiet_wait_s: Number(process.env.BENCH_LISTS_QUIET_WAIT || 300),
};
const TARGET_RATIO = 1.5;
const PAGES = ['first', `page ${SETTINGS.follow_pages}`, 'middle'];
const LISTS = ['cases', 'conversations'];
const say = h.sayer('bench:lists');
const env = (extra = {}) =>
  h.appEnv(
    { ...SETTINGS, node_env: SETTINGS.api_node_env, log_level: SETTINGS.api_log_level },
    { dataDir: work },
    { AUTH_CACHE_TTL_SECONDS: '60', ...h.UNLIMITED, BENCH_DIST: distDir, ...extra },
  );

const agent = h.keepAliveAgent(1);
const get = (port, pathAndQuery, headers) => h.request({ port, path: pathAndQuery, headers, agent, timeout: 10000 });

async function getJson(port, url, headers) {
  const res = await get(port, url, headers);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
  return JSON.parse(res.body);
}

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
  const middle = await cursorAfter(distDir, db, list, tenant.organisationId, Math.floor(size / 2));
  return { first: base, [PAGES[1]]: `${base}&cursor=${cursor}`, middle: `${base}&cursor=${middle.cursor}`, middleRow: middle.row };
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
      lists[list][t.page] = h.summariseMs(t.times);
      say(`${size} cases, GET /v1/${list} ${t.page}: p50 ${lists[list][t.page].p50_ms} ms, p99 ${lists[list][t.page].p99_ms} ms`);
    }
    lists[list].middle.rows_before = Math.floor(size / 2);
    lists[list].middle_plan = await explain(db, list, tenant.organisationId, urls[list].middleRow, SETTINGS.page_size);
  }
  return lists;
}

async function main() {
  const load = h.loadBefore(say);
  h.requireBuilds([distDir], ['admin', 'ApiModule', 'CasesHttpModule']);
  await h.recreateDatabase(SETTINGS.database_url);
  const admin = (args) => h.admin(args, { dist: distDir, env: env(), timeout: 120000 });
  const tenant = h.makeTenant(admin, { org: 'bench lists', connection: 'bench lists' });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId} with a key`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const headers = { authorization: `Bearer ${tenant.key}` };
  const sizes = [];
  try {
    const { port } = await h.startApi('api', { args: [path.join(__dirname, 'app.js'), 'api'], env: env({ ...(await h.ensureCert(work)), METRICS_PORT: '0' }) });
    let have = 0;
    for (const size of SETTINGS.sizes) {
      say(`growing to ${size} cases…`);
      const grown = await grow(db, tenant.organisationId, have + 1, size);
      say(`organisation holds ${grown.cases} cases and ${grown.conversations} conversations (inserted and analysed in ${grown.insert_s} s)`);
      have = size;
      const loadBefore = await h.waitForQuiet(SETTINGS.quiet_load, SETTINGS.quiet_wait_s, say);
      const lists = await measurePhase(db, port, headers, tenant, size);
      sizes.push({ ...grown, load_average_1m_before: loadBefore, load_average_1m_after: h.loadAverage(), lists });
    }
  } finally {
    await db.end();
    await h.stopAll();
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
    commit: h.gitCommit(),
    machine: { load_average_1m_before: load, ...h.machine() },
    settings: SETTINGS,
    sizes,
    comparison,
    middle_plans: { cases: large.lists.cases.middle_plan, conversations: large.lists.conversations.middle_plan },
    target: { max_p50_ratio: TARGET_RATIO },
    target_met: comparison.every((c) => c.within_target),
  };
  process.stdout.write(`\n${writeReport('lists', report)}\n`);
  say(`p50 at ${large.cases} cases within ${TARGET_RATIO}× of p50 at ${small.cases}: ${report.target_met ? 'yes' : 'NO'}`);
}

h.runMain(main, {
  tag: 'bench:lists',
  giveUpMinutes: 20,
  cleanup: () => {
    agent.destroy();
    return h.stopAll();
  },
});
