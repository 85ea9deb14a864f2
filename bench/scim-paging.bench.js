#!/usr/bin/env node
// SCIM index paging through 100,000 users, as Okta's import walks it: GET /scim/v2/Users with
// startIndex = 1, 101, 201, … and count=100 until past totalResults, every page's latency recorded,
// and the p50 of the last ten pages against the first ten. Two builds walk the same organisation
// side by side, page by page (A's page i then B's, the order swapped every page), each api its own
// process on one database and one Redis; every walk must answer each user exactly once, in id
// order, with totalResults right on every page, or the run fails.
// Then "after a bulk load": 20,000 more users inserted with SQL into a second organisation and
// not analysed, and its first page asked of A, of B, and of A again (what B's first ask leaves).
//   node bench/scim-paging.bench.js <distA> <distB>   → results/scim-paging.{json,md}
//   node bench/scim-paging.bench.js                   → the working tree alone (built into .data/bench-scim-paging/dist)
'use strict';
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');

const work = h.workDir('bench-scim-paging');
const DB_NAME = 'integrations_bench_scim_paging';
const SETTINGS = {
  users: Number(process.env.BENCH_SCIM_PAGING_USERS || 100000),
  count: Number(process.env.BENCH_SCIM_PAGING_COUNT || 100),
  bulk_load_users: Number(process.env.BENCH_SCIM_PAGING_BULK || 20000),
  bulk_load_asks: 3,
  edge_pages: 10,
  keep_alive: true,
  api_node_env: 'production',
  api_log_level: 'warn',
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchscimpaging',
};
const say = h.sayer('bench:scim-paging');
const env = (extra = {}) =>
  h.appEnv({ ...SETTINGS, node_env: SETTINGS.api_node_env, log_level: SETTINGS.api_log_level }, { dataDir: work }, { ...h.UNLIMITED, ...extra });
const adminOf = (dist) => (args) => h.admin(args, { dist, env: env(), timeout: 120000 });

let agent;
const round2 = (x) => +x.toFixed(2);

/** One list page: its time, ids and totalResults; anything but a 200 list fails the run. */
async function page(b, startIndex) {
  const res = await h.request({
    port: b.port,
    method: 'GET',
    path: `/scim/v2/Users?startIndex=${startIndex}&count=${SETTINGS.count}`,
    headers: b.headers,
    agent,
    timeout: 60000,
  });
  const body = res.status === 200 ? JSON.parse(res.body) : null;
  if (!body || !Array.isArray(body.Resources))
    throw new Error(`${b.name}: GET startIndex=${startIndex} answered ${res.status}: ${String(res.body).slice(0, 300)}`);
  return { ms: res.ms, ids: body.Resources.map((r) => r.id), total: body.totalResults };
}

/** The members `from`..`to - 1` of an organisation, inserted with SQL (the triggers give each a SCIM id); `analyse` as after autovacuum's round. */
async function grow(orgId, domain, from, to, analyse) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const started = Date.now();
  try {
    await db.query(`SET synchronous_commit = off`);
    await db.query(
      `INSERT INTO people (email, name, organisation_id, joined_at)
       SELECT 'user' || i || '@' || $2, 'Given' || i || ' Family' || i, $1, now() FROM generate_series($3::int, $4::int - 1) AS i`,
      [orgId, domain, from, to],
    );
    if (analyse) for (const t of ['people', 'scim_users', 'invitations', 'groups']) await db.query(`VACUUM ANALYZE ${t}`);
    return { insert_s: round2((Date.now() - started) / 1000) };
  } finally {
    await db.end();
  }
}

/** When people was last analysed, by an ANALYZE (the api's, or the benchmark's own after the first load) and by autovacuum. */
async function analysed() {
  const { Client } = require('pg');
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT last_analyze, last_autoanalyze FROM pg_stat_user_tables WHERE relname = 'people'`);
    return rows[0];
  } finally {
    await db.end();
  }
}

/** The walks, page by page, builds alternating: each build's per-page times, checked for exactly-once and totalResults. */
async function walk(builds) {
  const state = builds.map((b) => ({ b, startIndex: 1, times: [], seen: 0, last: 0n, done: false }));
  for (let i = 0; !state.every((s) => s.done); i++) {
    for (const s of i % 2 ? [...state].reverse() : state) {
      if (s.done) continue;
      const p = await page(s.b, s.startIndex);
      if (p.total !== SETTINGS.users) throw new Error(`${s.b.name}: page at ${s.startIndex} says totalResults ${p.total}, not ${SETTINGS.users}`);
      for (const id of p.ids) {
        if (BigInt(id) <= s.last) throw new Error(`${s.b.name}: id ${id} after ${s.last} at ${s.startIndex} (a duplicate or out of order)`);
        s.last = BigInt(id);
      }
      s.times.push(p.ms);
      s.seen += p.ids.length;
      s.startIndex += p.ids.length;
      s.done = p.ids.length === 0 || s.startIndex > p.total;
    }
    if ((i + 1) % 100 === 0) say(`page ${i + 1}: ${state.map((s) => `${s.b.name} ${round2(s.times[s.times.length - 1])} ms`).join(', ')}`);
  }
  return state.map((s) => {
    if (s.seen !== SETTINGS.users) throw new Error(`${s.b.name}: the walk answered ${s.seen} users, not ${SETTINGS.users}`);
    const n = SETTINGS.edge_pages;
    const first = h.median(s.times.slice(0, n));
    const last = h.median(s.times.slice(-n));
    const decile = (k) => round2(h.median(s.times.slice(Math.floor((k * s.times.length) / 10), Math.floor(((k + 1) * s.times.length) / 10))));
    return {
      build: s.b.name,
      dist: path.relative(h.root, path.resolve(s.b.dist)),
      pages: s.times.length,
      users: s.seen,
      walk_s: round2(s.times.reduce((a, x) => a + x, 0) / 1000),
      first_ten_p50_ms: round2(first),
      last_ten_p50_ms: round2(last),
      last_over_first: round2(last / first),
      p50_by_tenth_ms: Array.from({ length: 10 }, (_, k) => decile(k)),
      all: { n: s.times.length, ...h.summariseMs(s.times) },
      times_ms: s.times.map(round2),
    };
  });
}

async function main() {
  const load = h.loadBefore(say);
  const at = process.argv.slice(2);
  let dists;
  if (at.length >= 2) dists = at.slice(0, 2).map((d) => path.resolve(d));
  else {
    say('building the working tree into .data/bench-scim-paging/dist…');
    h.buildInto(path.join(work, 'dist'));
    dists = [path.join(work, 'dist')];
  }
  const names = dists.length === 2 ? ['A', 'B'] : ['B'];
  const newest = dists[dists.length - 1];
  await h.recreateDatabase(SETTINGS.database_url);
  const domain = 'bench-scim-paging.example';
  // The database is migrated by the newest build's admin CLI; both builds walk the same organisation with one key.
  const tenant = h.makeTenant(adminOf(newest), { org: 'bench scim paging', connection: 'bench scim paging', domain });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations); inserting ${SETTINGS.users} users with SQL…`);
  const grown = await grow(tenant.organisationId, domain, 0, SETTINGS.users, true);
  agent = h.keepAliveAgent(2);
  const tls = await h.ensureCert(work);
  try {
    const builds = [];
    for (const [k, dist] of dists.entries()) {
      const api = await h.startApi(names[k], { dist, env: env({ ...tls, METRICS_PORT: '0' }) });
      builds.push({ name: names[k], dist, ...api, headers: { authorization: `Bearer ${tenant.key}` } });
    }
    // Warm-up: a few pages each (connections, prepared plans), not measured.
    for (const b of builds) for (let s = 1; s <= 5 * SETTINGS.count; s += SETTINGS.count) await page(b, s);
    say(`walking ${SETTINGS.users} users, count=${SETTINGS.count}, ${builds.map((b) => b.name).join(' and ')} page by page…`);
    const walks = await walk(builds);
    for (const w of walks)
      say(`${w.build}: first ten p50 ${w.first_ten_p50_ms} ms, last ten p50 ${w.last_ten_p50_ms} ms (×${w.last_over_first}); walk ${w.walk_s} s`);

    // After a bulk load: a second organisation, not analysed; its first page from A, B, then A.
    const second = h.makeTenant(adminOf(newest), { org: 'bench scim paging bulk', connection: 'bulk', domain: 'bulk.bench-scim-paging.example' });
    const before = await analysed();
    const bulk = await grow(second.organisationId, 'bulk.bench-scim-paging.example', 0, SETTINGS.bulk_load_users, false);
    const loadedAt = new Date().toISOString();
    const headers = { authorization: `Bearer ${second.key}` };
    const asks = [];
    const order = builds.length === 2 ? [builds[0], builds[1], builds[0]] : [builds[0]];
    for (const b of order) {
      const times = [];
      for (let k = 0; k < SETTINGS.bulk_load_asks; k++) {
        const p = await page({ ...b, headers }, 1);
        if (p.total !== SETTINGS.bulk_load_users) throw new Error(`${b.name}: bulk organisation's totalResults ${p.total}`);
        times.push(round2(p.ms));
      }
      asks.push({ build: b.name, first_page_ms: times, analysed: await analysed() });
      say(`after a bulk load, ${b.name}'s first page: ${times.join(', ')} ms`);
    }
    const report = {
      benchmark: `SCIM paging: a walk through ${SETTINGS.users} users with count=${SETTINGS.count}, two builds page by page`,
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { load_average_1m_before: load, load_average_1m_after: h.loadAverage(), ...h.machine() },
      settings: SETTINGS,
      grow: grown,
      walks,
      after_bulk_load: { users: SETTINGS.bulk_load_users, insert_s: bulk.insert_s, loaded_at: loadedAt, analysed_before: before, asks },
    };
    process.stdout.write(`\n${writeReport('scim-paging', report)}\n`);
  } finally {
    await h.stopAll();
    agent.destroy();
  }
}

h.runMain(main, { tag: 'bench:scim-paging', giveUpMinutes: 40 });
