#!/usr/bin/env node
// SCIM provisioning at scale: 10,000 users created through POST /scim/v2/Users (as Okta and
// Entra ID create them), then read back with `userName eq` filters; lookups measured again once
// the organisation holds 100,000 users (the extra 90,000 inserted with SQL). Also the first page
// of an unfiltered list (Okta's import) at both sizes, since its totalResults counts every user.
// Loopback only; a dedicated database it drops and recreates; its own build of the code (so a
// concurrent `npm run build` cannot pull dist/ from under it); it stops by itself and kills its
// children on the way out. `node bench/scim.bench.js` (about 5 minutes).
'use strict';
const lib = require('./lib');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const { root, withDb } = lib;
const work = path.join(root, '.data', 'bench-scim');
const distDir = path.join(work, 'dist');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_scim';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SETTINGS = {
  provisioned_users: Number(process.env.BENCH_SCIM_USERS || 10000),
  total_users: Number(process.env.BENCH_SCIM_TOTAL || 100000),
  provisioning_concurrency: Number(process.env.BENCH_SCIM_CONCURRENCY || 8),
  lookups: Number(process.env.BENCH_SCIM_LOOKUPS || 2000),
  lookup_warmup: 200,
  list_requests: 50,
  keep_alive: true,
  api_node_env: 'production',
  api_log_level: 'warn',
  welcome_mail: 'sent over SMTP to a minimal sink in the benchmark process (one connection per mail, as the api sends them; the api awaits it after commit)',
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchscim',
};
const say = (msg) => process.stdout.write(`[bench:scim] ${msg}\n`);

// ---- child mode: the built api with the SCIM module mounted (until ApiModule imports it) ----
async function serve() {
  require('reflect-metadata');
  const dist = (p) => require(path.join(distDir, p));
  const { AppConfig } = dist('libs/config/src');
  const { ApiModule } = dist('apps/api/src/api.module');
  const { createApiApp } = dist('apps/api/src/bootstrap');
  const { ScimModule } = dist('apps/api/src/scim/scim.module');
  const config = AppConfig.fromEnv();
  const extra = ApiModule.forRoot(config).imports.includes(ScimModule) ? [] : [ScimModule];
  const app = await createApiApp(config, extra);
  await app.listen(config.port, config.host);
  process.stdout.write(`scim api listening on https://${config.host}:${config.port}\n`);
}

// ---- parent mode ----
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
    // Buckets no load here can empty: the bench measures the rate limit's cost (one EVALSHA a call), never its 429s.
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '10000000',
    SCIM_RATE_LIMIT_PER_SECOND: '1000000',
    SCIM_RATE_LIMIT_BURST: '10000000',
    DATA_DIR: work,
    ...extra,
  };
}

const admin = (args) => lib.admin(args, { dist: distDir, env: env(), timeout: 120000 });

const ensureCert = () => lib.ensureCert(work, HOST);

/**
 * A minimal SMTP sink that accepts and drops every message (the welcome emails). Not smtp-server:
 * it holds each greeting back 100 ms to catch early talkers, which would make a local relay look
 * slower than any real one.
 */
async function smtpSink() {
  let received = 0;
  const sink = net.createServer((socket) => {
    let inData = false;
    let buffer = '';
    socket.on('error', () => socket.destroy());
    socket.write('220 bench-sink ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          received++;
          socket.write('250 OK queued\r\n');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-bench-sink\r\n250 8BITMIME\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise((resolve) => sink.listen(0, HOST, resolve));
  return { url: `smtp://${HOST}:${sink.address().port}`, received: () => received, close: () => new Promise((r) => sink.close(() => r())) };
}

let agent;
/** A request to the api on `port` through the keep-alive agent; `body`, if given, sent as SCIM JSON. */
const request = (port, method, pathAndQuery, headers, body) =>
  lib.request({ port, method, path: pathAndQuery, headers, json: body, contentType: 'application/scim+json', agent, timeout: 15000 });

const waitReady = (proc, port) =>
  lib.waitReady('the api', proc, async () => {
    const res = await request(port, 'GET', '/health/ready', {}).catch(() => null);
    return res && res.status === 200;
  });

const summarise = (times) => ({ n: times.length, ...lib.summariseMs(times) });

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

async function provision(port, headers, domain) {
  const n = SETTINGS.provisioned_users;
  const times = [];
  let next = 0;
  const started = process.hrtime.bigint();
  async function worker() {
    for (let i = next++; i < n; i = next++) {
      const res = await request(port, 'POST', '/scim/v2/Users', headers, userBody(i, domain));
      if (res.status !== 201) throw new Error(`POST /scim/v2/Users (user ${i}) answered ${res.status}: ${res.body}`);
      times.push(res.ms);
      if ((i + 1) % 2000 === 0) say(`${i + 1} users provisioned`);
    }
  }
  await Promise.all(Array.from({ length: SETTINGS.provisioning_concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { users: n, seconds: +seconds.toFixed(1), users_per_second: +(n / seconds).toFixed(1), latency: summarise(times) };
}

/** `userName eq` lookups of random users (any case), sequential on one keep-alive connection; each must find exactly that user. */
async function lookups(port, headers, domain, population) {
  const pick = () => {
    const i = Math.floor(Math.random() * population);
    const name = address(i, domain);
    return Math.random() < 0.5 ? name : name.toUpperCase();
  };
  const one = async () => {
    const name = pick();
    const url = `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}&startIndex=1&count=100`;
    const res = await request(port, 'GET', url, headers);
    const body = res.status === 200 ? JSON.parse(res.body) : null;
    if (!body || body.totalResults !== 1 || body.Resources[0].userName.toLowerCase() !== name.toLowerCase())
      throw new Error(`GET ${url} answered ${res.status}: ${res.body}`);
    return res.ms;
  };
  for (let i = 0; i < SETTINGS.lookup_warmup; i++) await one();
  const times = [];
  for (let i = 0; i < SETTINGS.lookups; i++) times.push(await one());
  return summarise(times);
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

/** The other 90,000 members, inserted with SQL as another door would add them (the triggers give each a SCIM id). */
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

function markdown(r) {
  const fmt = (n) => n.toLocaleString('en');
  const p = r.provisioning;
  return [
    `Run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'} (plus uncommitted SCIM work), load average before ${r.machine.load_average_1m_before}.`,
    `api: NODE_ENV=${SETTINGS.api_node_env}, LOG_LEVEL=${SETTINGS.api_log_level}, HTTPS keep-alive, local Postgres and Redis; the load generator on the same machine.`,
    '',
    `**Provisioning**: ${fmt(p.users)} users through \`POST /scim/v2/Users\` (Okta's create body, addresses on a verified domain so each is created, with its welcome email sent to a local SMTP sink), ${SETTINGS.provisioning_concurrency} concurrent connections: **${p.users_per_second} users/s** (${p.seconds} s); latency p50 ${p.latency.p50_ms} ms, p99 ${p.latency.p99_ms} ms.`,
    '',
    `| organisation holds | \`userName eq\` lookup p50 ms | p99 ms | mean ms | lookups | first page of the unfiltered list p50 ms | p99 ms |`,
    '|---:|---:|---:|---:|---:|---:|---:|',
    ...r.sizes.map(
      (s) =>
        `| ${fmt(s.users)} users | ${s.lookup.p50_ms} | ${s.lookup.p99_ms} | ${s.lookup.mean_ms} | ${s.lookup.n} | ${s.first_page.p50_ms} | ${s.first_page.p99_ms} |`,
    ),
    '',
    `Lookups: sequential on one connection, random users (half of them with the address upper-cased), ${SETTINGS.lookup_warmup} warm-up lookups discarded; each answer checked to hold exactly that user. The extra ${fmt(r.total_users - p.users)} users were inserted with SQL (${r.grow.insert_s} s, triggers included), then the tables analysed; the ${fmt(p.users)}-user row is measured right after provisioning, before autovacuum had analysed them (as just after a real import), which is why its unfiltered first page can be slower than the larger one's.`,
    '',
  ].join('\n');
}

async function main() {
  const load = +os.loadavg()[0].toFixed(2);
  if (load > 0.5) say(`warning: the machine is busy (load average ${load}): numbers will be noisy`);
  say('building into .data/bench-scim/dist…');
  lib.compileInto(distDir);
  await lib.recreateDatabase(server, DB_NAME);
  const tenant = lib.makeTenant(admin, { org: 'bench scim', connection: 'bench scim' });
  const domain = 'bench-scim.example';
  admin(['org', 'domain', tenant.organisationId, 'add', domain]);
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId} with ${domain} verified and a key`);
  const smtp = await smtpSink();
  const port = await lib.freePort(HOST);
  agent = lib.keepAliveAgent(SETTINGS.provisioning_concurrency);
  const api = lib.start('api', [__filename, '--serve'], env({ ...(await ensureCert()), PORT: String(port), SMTP_URL: smtp.url, METRICS_PORT: '0' }));
  const headers = { authorization: `Bearer ${tenant.key}` };
  let report;
  try {
    await waitReady(api, port);
    say(`provisioning ${SETTINGS.provisioned_users} users…`);
    const provisioning = await provision(port, headers, domain);
    say(
      `${provisioning.users_per_second} users/s; p50 ${provisioning.latency.p50_ms} ms, p99 ${provisioning.latency.p99_ms} ms; welcome mails received: ${smtp.received()}`,
    );
    const sizes = [];
    const small = {
      users: SETTINGS.provisioned_users,
      lookup: await lookups(port, headers, domain, SETTINGS.provisioned_users),
      first_page: await firstPage(port, headers, SETTINGS.provisioned_users),
    };
    say(`${small.users} users: lookup p50 ${small.lookup.p50_ms} ms, p99 ${small.lookup.p99_ms} ms; first page p50 ${small.first_page.p50_ms} ms`);
    sizes.push(small);
    say(`inserting users up to ${SETTINGS.total_users} with SQL…`);
    const grown = await grow(tenant.organisationId, domain, SETTINGS.provisioned_users, SETTINGS.total_users);
    if (grown.scim_users !== SETTINGS.total_users) throw new Error(`expected ${SETTINGS.total_users} SCIM users, found ${grown.scim_users}`);
    const large = {
      users: SETTINGS.total_users,
      lookup: await lookups(port, headers, domain, SETTINGS.total_users),
      first_page: await firstPage(port, headers, SETTINGS.total_users),
    };
    say(`${large.users} users: lookup p50 ${large.lookup.p50_ms} ms, p99 ${large.lookup.p99_ms} ms; first page p50 ${large.first_page.p50_ms} ms`);
    sizes.push(large);
    report = {
      benchmark: 'SCIM: POST /scim/v2/Users provisioning and userName eq lookups at 10,000 and 100,000 users (HTTPS, keep-alive)',
      date: new Date().toISOString(),
      commit: lib.gitCommit(),
      machine: { load_average_1m_before: load, ...lib.machine() },
      settings: SETTINGS,
      provisioning,
      welcome_mails_received: smtp.received(),
      grow: grown,
      total_users: SETTINGS.total_users,
      sizes,
    };
  } finally {
    await lib.stop(api);
    await smtp.close();
    agent.destroy();
  }
  const md = markdown(report);
  lib.writeResults('scim', report, md, 'SCIM provisioning and lookups');
  process.stdout.write(`\n${md}\nwritten: bench/results/scim.json, bench/results/scim.md\n`);
}

if (process.argv.includes('--serve')) {
  serve().catch((err) => {
    process.stderr.write(`scim api failed to start: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  });
} else {
  lib.runMain(main, { tag: 'bench:scim', giveUpMinutes: 30 });
}
