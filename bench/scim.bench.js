#!/usr/bin/env node
// SCIM provisioning at scale, as Okta and Entra ID provision:
// - 10,000 users created through POST /scim/v2/Users, 8 connections, each with its welcome mail to a
//   local SMTP sink: users/s and latency;
// - `userName eq` lookups (sequential, one connection) and the first page of the unfiltered list
//   (Okta's import; its totalResults counts every user) at 10,000 users, then again at 100,000 (the
//   extra users inserted with SQL);
// - where a create goes: the api instrumented by bench/scim-trace.js during provisioning and over
//   300 creates one at a time, and one create replayed under EXPLAIN.
//   node bench/scim.bench.js                              → results/scim.{json,md}
//   node bench/scim.bench.js --compare <distA> <distB>    → results/scim-compare.{json,md}
//   BENCH_SCIM_REPORT=<name> names the --compare report instead (e.g. scim-compare-provisioning-log:
//   main before the provisioning log as A, with it as B).
// --compare runs both builds at once on one database, provisioning in alternating slices (the order
// swapped each round), then lookups alternating the same way: per build users/s, latency, statements
// and CPU per create, and the median over rounds of B's users/s ÷ A's.
// It builds its own copy of the sources (.data/bench-scim/dist; BENCH_SCIM_DIST runs a prebuilt one).
'use strict';
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');
const { explainCreate, startMeter, stopMeter } = require('./scim-trace');

const work = h.workDir('bench-scim');
const distDir = process.env.BENCH_SCIM_DIST ? path.resolve(process.env.BENCH_SCIM_DIST) : path.join(work, 'dist');
const DB_NAME = process.env.BENCH_SCIM_DB || 'integrations_bench_scim';
const SETTINGS = {
  provisioned_users: Number(process.env.BENCH_SCIM_USERS || 10000),
  total_users: Number(process.env.BENCH_SCIM_TOTAL || 100000),
  provisioning_concurrency: Number(process.env.BENCH_SCIM_CONCURRENCY || 8),
  lookups: Number(process.env.BENCH_SCIM_LOOKUPS || 2000),
  lookup_warmup: 200,
  traced_creates: Number(process.env.BENCH_SCIM_TRACED || 300),
  list_requests: 50,
  keep_alive: true,
  api_node_env: 'production',
  api_log_level: 'warn',
  welcome_mail:
    'sent by the api after commit, not awaited by the answer, over SMTP to a minimal sink in the benchmark process; counted once provisioning is done (waiting up to 60 s for the last)',
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: process.env.BENCH_SCIM_DB ? `ia${process.env.BENCH_SCIM_DB.replace(/[^a-z0-9]/gi, '')}` : 'iabenchscim',
};
const say = h.sayer('bench:scim');
const env = (extra = {}) =>
  h.appEnv(
    { ...SETTINGS, node_env: SETTINGS.api_node_env, log_level: SETTINGS.api_log_level },
    { dataDir: work },
    { AUTH_CACHE_TTL_SECONDS: '60', ...h.UNLIMITED, ...extra },
  );
const adminOf = (dist) => (args) => h.admin(args, { dist, env: env(), timeout: 120000 });

let agent;
/** A request to the api on `port` through the keep-alive agent; `body`, if given, sent as SCIM JSON. */
const request = (port, method, pathAndQuery, headers, body) =>
  h.request({ port, method, path: pathAndQuery, headers, json: body, contentType: 'application/scim+json', agent, timeout: 15000 });

const summarise = (times) => ({ n: times.length, ...h.summariseMs(times) });
const address = (i, domain) => `user${i}@${domain}`;

/** Okta's create body for user i. */
const userBody = (i, domain) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName: address(i, domain),
  name: { givenName: `Given${i}`, familyName: `Family${i}` },
  emails: [{ primary: true, value: address(i, domain), type: 'work' }],
  displayName: `Given${i} Family${i}`,
  locale: 'en-US',
  externalId: `00u${String(i).padStart(10, '0')}`,
  groups: [],
  password: 'not-kept-1',
  active: true,
});

/** The built api of `dist` with the trace instruments (bench/app.js), the SMTP sink as its mail server: {proc, port, tracePort}. */
async function startTracedApi(name, dist, smtp, tls) {
  const tracePort = await h.freePort();
  const args = [path.join(__dirname, 'app.js'), 'api'];
  const api = await h.startApi(name, {
    args,
    env: env({ ...tls, SMTP_URL: smtp.url, METRICS_PORT: '0', BENCH_TRACE_PORT: String(tracePort), BENCH_DIST: dist }),
  });
  return { ...api, tracePort };
}

/** Creates users `from`..`from + count - 1` over the concurrent connections: their latencies, seconds and users/s. */
async function createUsers(port, headers, domain, from, count, { progress = false } = {}) {
  const times = [];
  const seconds = await h.forEachConcurrently(from, count, SETTINGS.provisioning_concurrency, async (i) => {
    const res = await request(port, 'POST', '/scim/v2/Users', headers, userBody(i, domain));
    if (res.status !== 201) throw new Error(`POST /scim/v2/Users (user ${i}) answered ${res.status}: ${res.body}`);
    times.push(res.ms);
    if (progress && (i + 1) % 2000 === 0) say(`${i + 1} users provisioned`);
  });
  return { times, seconds, users_per_second: +(count / seconds).toFixed(1) };
}

/** `count` `userName eq` lookups of random users of the first `population` (every other one upper-cased), sequential: their times. Each must find exactly that user. */
async function lookupTimes(port, headers, domain, population, count) {
  const times = [];
  for (let k = 0; k < count; k++) {
    const name = address(Math.floor(Math.random() * population), domain);
    const url = `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${k % 2 ? name.toUpperCase() : name}"`)}&startIndex=1&count=100`;
    const res = await request(port, 'GET', url, headers);
    const body = res.status === 200 ? JSON.parse(res.body) : null;
    if (!body || body.totalResults !== 1 || body.Resources[0].userName.toLowerCase() !== name.toLowerCase())
      throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
    times.push(res.ms);
  }
  return times;
}

/** Lookups after the warm-up, summarised. */
async function lookups(port, headers, domain, population) {
  await lookupTimes(port, headers, domain, population, SETTINGS.lookup_warmup);
  return summarise(await lookupTimes(port, headers, domain, population, SETTINGS.lookups));
}

/** The first page of the unfiltered list (what Okta's import asks for first), whose totalResults counts every user. */
async function firstPage(port, headers, population) {
  const times = [];
  for (let i = 0; i < SETTINGS.list_requests + 5; i++) {
    const res = await request(port, 'GET', '/scim/v2/Users?startIndex=1&count=100', headers);
    const body = res.status === 200 ? JSON.parse(res.body) : null;
    if (!body || body.totalResults !== population || body.Resources.length !== 100)
      throw new Error(`GET /scim/v2/Users answered ${res.status}: ${String(res.body).slice(0, 300)}`);
    if (i >= 5) times.push(res.ms);
  }
  return summarise(times);
}

/** The members `from`..`to - 1`, inserted with SQL as another door would add them (the triggers give each a SCIM id). */
async function grow(orgId, domain, from, to) {
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
    for (const t of ['people', 'scim_users', 'invitations']) await db.query(`VACUUM ANALYZE ${t}`);
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM scim_users WHERE organisation_id = $1`, [orgId]);
    return { scim_users: rows[0].n, insert_s: +((Date.now() - started) / 1000).toFixed(1) };
  } finally {
    await db.end();
  }
}

/** `count` creates one after another on one connection, traced: the service time without queueing. */
async function sequentialCreates(port, headers, domain, tracePort, count) {
  const meter = await startMeter(tracePort, SETTINGS.database_url);
  for (let i = 0; i < count; i++) {
    const res = await request(port, 'POST', '/scim/v2/Users', headers, {
      ...userBody(i, domain),
      userName: `trace${i}@${domain}`,
      emails: [{ primary: true, value: `trace${i}@${domain}`, type: 'work' }],
      externalId: `tr${i}`,
    });
    if (res.status !== 201) throw new Error(`POST /scim/v2/Users (trace ${i}) answered ${res.status}: ${res.body}`);
  }
  return stopMeter(tracePort, meter);
}

/** Lookups and the first page at `users` users. */
async function atSize(port, headers, domain, users) {
  const size = { users, lookup: await lookups(port, headers, domain, users), first_page: await firstPage(port, headers, users) };
  say(`${users} users: lookup p50 ${size.lookup.p50_ms} ms, p99 ${size.lookup.p99_ms} ms; first page p50 ${size.first_page.p50_ms} ms`);
  return size;
}

async function main() {
  const load = h.loadBefore(say);
  if (process.env.BENCH_SCIM_DIST) say(`using the build in ${distDir}`);
  else {
    say('building into .data/bench-scim/dist…');
    h.buildInto(distDir);
  }
  await h.recreateDatabase(SETTINGS.database_url);
  const domain = 'bench-scim.example';
  const tenant = h.makeTenant(adminOf(distDir), { org: 'bench scim', connection: 'bench scim', domain });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId} with ${domain} verified and a key`);
  const smtp = await h.smtpSink();
  agent = h.keepAliveAgent(SETTINGS.provisioning_concurrency);
  const headers = { authorization: `Bearer ${tenant.key}` };
  try {
    const { port, tracePort } = await startTracedApi('api', distDir, smtp, await h.ensureCert(work));
    say(`provisioning ${SETTINGS.provisioned_users} users…`);
    const meter = await startMeter(tracePort, SETTINGS.database_url);
    const created = await createUsers(port, headers, domain, 0, SETTINGS.provisioned_users, { progress: true });
    const provisioning = {
      users: SETTINGS.provisioned_users,
      seconds: +created.seconds.toFixed(1),
      users_per_second: created.users_per_second,
      latency: summarise(created.times),
    };
    const concurrent = await stopMeter(tracePort, meter);
    const mailDrain = await smtp.drain(SETTINGS.provisioned_users);
    say(
      `${provisioning.users_per_second} users/s; p50 ${provisioning.latency.p50_ms} ms, p99 ${provisioning.latency.p99_ms} ms; welcome mails received: ${smtp.received()}`,
    );
    const sizes = [await atSize(port, headers, domain, SETTINGS.provisioned_users)];
    say(`inserting users up to ${SETTINGS.total_users} with SQL…`);
    const grown = await grow(tenant.organisationId, domain, SETTINGS.provisioned_users, SETTINGS.total_users);
    if (grown.scim_users !== SETTINGS.total_users) throw new Error(`expected ${SETTINGS.total_users} SCIM users, found ${grown.scim_users}`);
    sizes.push(await atSize(port, headers, domain, SETTINGS.total_users));
    say(`${SETTINGS.traced_creates} creates one at a time, traced…`);
    const sequential = await sequentialCreates(port, headers, domain, tracePort, SETTINGS.traced_creates);
    const explain = await explainCreate(SETTINGS.database_url, sequential.sample, `trace0@${domain}`, `explain0@${domain}`, 'tr0');
    const report = {
      benchmark: 'SCIM: POST /scim/v2/Users provisioning and userName eq lookups at 10,000 and 100,000 users (HTTPS, keep-alive)',
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { load_average_1m_before: load, ...h.machine() },
      settings: SETTINGS,
      provisioning,
      welcome_mails_received: smtp.received(),
      welcome_mails_after_provisioning: mailDrain,
      grow: grown,
      total_users: SETTINGS.total_users,
      sizes,
      breakdown: { concurrent, sequential, explain },
    };
    process.stdout.write(`\n${writeReport('scim', report)}\n`);
  } finally {
    await h.stopAll();
    await smtp.close();
    agent.destroy();
  }
}

async function compare(distA, distB) {
  const rounds = Number(process.env.BENCH_SCIM_ROUNDS || 10);
  const load = h.loadAverage();
  await h.recreateDatabase(SETTINGS.database_url);
  const smtp = await h.smtpSink();
  agent = h.keepAliveAgent(SETTINGS.provisioning_concurrency * 2);
  const tls = await h.ensureCert(work);
  const builds = [];
  try {
    for (const [name, dist] of [
      ['A', distA],
      ['B', distB],
    ]) {
      // Both organisations are made (and the database migrated) by B's admin CLI.
      const domain = `${name.toLowerCase()}.bench-scim.example`;
      const tenant = h.makeTenant(adminOf(path.resolve(distB)), { org: `bench scim ${name}`, connection: `bench scim ${name}`, domain });
      const api = await startTracedApi(name, path.resolve(dist), smtp, tls);
      builds.push({ name, dist, ...api, domain, headers: { authorization: `Bearer ${tenant.key}` }, slices: [], lookups: [], traces: [] });
    }
    const per = Math.floor(SETTINGS.provisioned_users / rounds);
    const ratios = [];
    for (let round = 0; round < rounds; round++) {
      for (const b of h.alternated(builds, round + 1)) {
        const meter = await startMeter(b.tracePort, SETTINGS.database_url);
        b.slices.push(await createUsers(b.port, b.headers, b.domain, round * per, per));
        b.traces.push(await stopMeter(b.tracePort, meter));
      }
      ratios.push(builds[1].slices[round].users_per_second / builds[0].slices[round].users_per_second);
      say(`round ${round + 1}/${rounds}: A ${builds[0].slices[round].users_per_second} users/s, B ${builds[1].slices[round].users_per_second} users/s`);
    }
    const population = per * rounds;
    const mailDrain = await smtp.drain(population * 2);
    say(`welcome mails: ${mailDrain.received} of ${mailDrain.expected}, the last ${mailDrain.waited_s} s after the last create`);
    for (let round = 0; round < rounds; round++) {
      for (const b of h.alternated(builds, round + 1))
        b.lookups.push(...(await lookupTimes(b.port, b.headers, b.domain, population, Math.ceil(SETTINGS.lookups / rounds))));
    }
    const summary = builds.map((b) => {
      const times = b.slices.flatMap((x) => x.times);
      const seconds = b.slices.reduce((a, x) => a + x.seconds, 0);
      const t = b.traces;
      const avg = (f) => +(t.reduce((a, x) => a + f(x), 0) / t.length).toFixed(2);
      return {
        build: b.name,
        dist: path.relative(h.root, path.resolve(b.dist)),
        users: times.length,
        users_per_second: +(times.length / seconds).toFixed(1),
        latency: summarise(times),
        slices_users_per_second: b.slices.map((x) => x.users_per_second),
        sql_statements_per_create: avg((x) => x.sql_statements_per_create),
        server_ms_per_create: avg((x) => x.server_ms_per_create.total.mean),
        sql_ms_per_create: avg((x) => x.server_ms_per_create.sql.mean),
        cpu_ms_per_create: {
          api: avg((x) => x.cpu_ms_per_create.api),
          postgres_backends: avg((x) => x.cpu_ms_per_create.postgres_backends),
          load_generator_and_smtp_sink: avg((x) => x.cpu_ms_per_create.load_generator_and_smtp_sink),
        },
        lookup: summarise(b.lookups),
      };
    });
    const report = {
      benchmark: 'SCIM provisioning and userName eq lookups, two builds side by side in alternating slices',
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { load_average_1m_before: load, load_average_1m_after: h.loadAverage(), ...h.machine() },
      rounds,
      users_per_slice: per,
      concurrency: SETTINGS.provisioning_concurrency,
      lookups: SETTINGS.lookups,
      builds: summary,
      median_ratio_b_over_a: +h.upperMedian(ratios).toFixed(3),
      ratios: ratios.map((r) => +r.toFixed(3)),
      welcome_mails_received: smtp.received(),
      welcome_mails_after_provisioning: mailDrain,
    };
    process.stdout.write(`\n${writeReport(process.env.BENCH_SCIM_REPORT || 'scim-compare', report)}\n`);
  } finally {
    await h.stopAll();
    await smtp.close();
    agent.destroy();
  }
}

const at = process.argv.indexOf('--compare');
if (at >= 0) {
  const [a, b] = process.argv.slice(at + 1, at + 3);
  if (!a || !b) throw new Error('usage: node bench/scim.bench.js --compare <distA> <distB>');
  h.runMain(() => compare(a, b), { tag: 'bench:scim', giveUpMinutes: 30 });
} else h.runMain(main, { tag: 'bench:scim', giveUpMinutes: 30 });
