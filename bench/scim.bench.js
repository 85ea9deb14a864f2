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
const distDir = process.env.BENCH_SCIM_DIST ? path.resolve(process.env.BENCH_SCIM_DIST) : path.join(work, 'dist');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_scim';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
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
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchscim',
};
const say = (msg) => process.stdout.write(`[bench:scim] ${msg}\n`);

// ---- child mode: the built api with the SCIM module mounted (until ApiModule imports it) ----
async function serve() {
  require('reflect-metadata');
  const dist = (p) => require(path.join(distDir, p));
  const trace = process.env.BENCH_SCIM_TRACE_PORT ? installTrace(dist) : null;
  const { AppConfig } = dist('libs/config/src');
  const { ApiModule } = dist('apps/api/src/api.module');
  const { createApiApp } = dist('apps/api/src/bootstrap');
  const { ScimModule } = dist('apps/api/src/scim/scim.module');
  const config = AppConfig.fromEnv();
  const extra = ApiModule.forRoot(config).imports.includes(ScimModule) ? [] : [ScimModule];
  const app = await createApiApp(config, extra);
  await app.listen(config.port, config.host);
  if (trace) await trace.attach(app.getHttpServer(), Number(process.env.BENCH_SCIM_TRACE_PORT));
  process.stdout.write(`scim api listening on https://${config.host}:${config.port}\n`);
}

/**
 * The breakdown's instruments, in the api child only (nothing in the product): every request runs
 * in an AsyncLocalStorage context of its own, and while tracing is on each pg query (call to
 * answer, as the pool's client sees it: network, parse, execution, lock waits), each wait for a
 * pooled connection, each Redis command and each Mailer.send is timed into the request that made
 * it. A loopback control server turns it on (POST /on) and answers the per-request records and
 * the process's CPU time since (POST /off). Its cost: one performance.now() pair per query.
 */
function installTrace(dist) {
  const { AsyncLocalStorage } = require('node:async_hooks');
  const http = require('node:http');
  const { performance } = require('node:perf_hooks');
  const pg = require('pg');
  const Redis = require('ioredis');
  const { Mailer } = dist('libs/domain/src/mail/mailer');
  const als = new AsyncLocalStorage();
  let on = false;
  let records = [];
  let mails = [];
  let cpu0 = process.cpuUsage();
  const timed = (kind, label, promise) => {
    const ctx = on && als.getStore();
    if (!ctx || !promise || typeof promise.then !== 'function') return promise;
    const t0 = performance.now();
    const done = () => ctx.events.push({ kind, label, at: t0 - ctx.t0, ms: performance.now() - t0 });
    promise.then(done, done);
    return promise;
  };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, cb) {
    if (typeof cb === 'function' || typeof values === 'function') return query.apply(this, arguments);
    const text = typeof config === 'string' ? config : config && config.text;
    const args = typeof config === 'string' || (config && config.text) ? [text, Array.isArray(values) ? values : config.values] : null;
    const ctx = on && als.getStore();
    if (ctx && args && records.length < 5) ctx.statements.push({ text, values: args[1] ?? [] });
    return timed('sql', text ? text.replace(/\s+/g, ' ').trim() : '?', query.apply(this, arguments));
  };
  const connect = pg.Pool.prototype.connect;
  pg.Pool.prototype.connect = function (cb) {
    const ctx = on && als.getStore();
    if (!ctx || typeof cb !== 'function') return connect.apply(this, arguments);
    const t0 = performance.now();
    return connect.call(this, (...r) => {
      ctx.events.push({ kind: 'pool', label: 'wait for a pooled connection', at: t0 - ctx.t0, ms: performance.now() - t0 });
      cb(...r);
    });
  };
  const sendCommand = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (command) {
    const p = sendCommand.apply(this, arguments);
    return command && command.name ? (timed('redis', command.name, command.promise), p) : p;
  };
  const send = Mailer.prototype.send;
  Mailer.prototype.send = function (message) {
    const ctx = on && als.getStore();
    const t0 = performance.now();
    const p = send.call(this, message);
    if (ctx) {
      const done = () => mails.push({ after_request_start_ms: t0 - ctx.t0, ms: performance.now() - t0, before_answer: !ctx.finished });
      p.then(done, done);
    }
    return p;
  };
  return {
    attach(server, port) {
      for (const listener of server.listeners('request')) {
        server.removeListener('request', listener);
        server.on('request', (req, res) => {
          if (!on) return listener(req, res);
          const ctx = { t0: performance.now(), events: [], statements: [], method: req.method, url: req.url, finished: false };
          res.once('finish', () => {
            ctx.finished = true;
            ctx.ms = performance.now() - ctx.t0;
            ctx.status = res.statusCode;
            records.push(ctx);
          });
          als.run(ctx, () => listener(req, res));
        });
      }
      // BENCH_SCIM_CPU_PROFILE=<file>: a V8 CPU profile of the api over the first traced phase (provisioning).
      const profileFile = process.env.BENCH_SCIM_CPU_PROFILE;
      const inspector = profileFile ? new (require('node:inspector').Session)() : null;
      let profiled = false;
      if (inspector) inspector.connect();
      const post = (method) => new Promise((resolve, reject) => inspector.post(method, (err, r) => (err ? reject(err) : resolve(r))));
      const control = http.createServer(async (req, res) => {
        if (inspector && !profiled) {
          if (req.url === '/on') await post('Profiler.enable').then(() => post('Profiler.start'));
          else {
            profiled = true;
            const { profile } = await post('Profiler.stop');
            require('node:fs').writeFileSync(profileFile, JSON.stringify(profile));
          }
        }
        if (req.url === '/on') {
          records = [];
          mails = [];
          cpu0 = process.cpuUsage();
          on = true;
          return res.end('{}');
        }
        on = false;
        const cpu = process.cpuUsage(cpu0);
        const out = { cpu_ms: (cpu.user + cpu.system) / 1000, mails, records: records.map(({ statements, ...r }, i) => (i < 5 ? { ...r, statements } : r)) };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(out));
      });
      return new Promise((resolve) => control.listen(port, HOST, resolve));
    },
  };
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

/** Waits up to `ms` for the sink to have received `expected` mails: the seconds it took past this call, and the count then. */
async function drainMails(smtp, expected, ms = 60000) {
  const started = Date.now();
  while (smtp.received() < expected && Date.now() - started < ms) await new Promise((r) => setTimeout(r, 50));
  return { expected, received: smtp.received(), waited_s: +((Date.now() - started) / 1000).toFixed(1) };
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

/** Creates users `from`..`from + count - 1` (8 connections): their latencies, seconds and users/s. */
async function provisionSlice(port, headers, domain, from, count) {
  const times = [];
  let next = from;
  const started = process.hrtime.bigint();
  async function worker() {
    for (let i = next++; i < from + count; i = next++) {
      const res = await request(port, 'POST', '/scim/v2/Users', headers, userBody(i, domain));
      if (res.status !== 201) throw new Error(`POST /scim/v2/Users (user ${i}) answered ${res.status}: ${res.body}`);
      times.push(res.ms);
    }
  }
  await Promise.all(Array.from({ length: SETTINGS.provisioning_concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { times, seconds, users_per_second: +(count / seconds).toFixed(1) };
}

/** `count` `userName eq` lookups as in lookups() below, without warm-up: their times. */
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

// ---- the breakdown of a create ----

/** POST to the api child's trace control server (see installTrace). */
function traceControl(port, what) {
  const http = require('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: HOST, port, method: 'POST', path: `/${what}` }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CPU time (ms) of this database's Postgres backends, by pid, from /proc (utime + stime). */
async function backendCpu() {
  const { Client } = require('pg');
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [DB_NAME]);
    const tick = 1000 / 100;
    const out = new Map();
    for (const { pid } of rows) {
      try {
        const f = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
        out.set(pid, (Number(f[11]) + Number(f[12])) * tick);
      } catch {
        // gone meanwhile
      }
    }
    return out;
  } finally {
    await db.end();
  }
}

const cpuSince = (before, after) => [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

/** Starts the instruments: the api's trace, this process's CPU time and the database backends'. */
async function startMeter(tracePort) {
  const backends = await backendCpu();
  await traceControl(tracePort, 'on');
  return { backends, self: process.cpuUsage(), started: process.hrtime.bigint() };
}

/**
 * Stops them and sums up the creates (POST /scim/v2/Users answered 201): per create, the server's
 * time (request in to answer written) split into SQL (each statement call to answer), waits for a
 * pooled connection, Redis, and the rest (JS: routing, auth, validation, TypeORM, serialisation,
 * and under concurrency the wait for the event loop); before the transaction, inside it (BEGIN to
 * COMMIT answered) and after; the statements by text with count and time; the welcome mails; and
 * CPU time per create of the api, of the database backends and of this process (load generator and
 * SMTP sink).
 */
async function stopMeter(tracePort, meter) {
  const wallS = Number(process.hrtime.bigint() - meter.started) / 1e9;
  const trace = await traceControl(tracePort, 'off');
  const backends = await backendCpu();
  const self = process.cpuUsage(meter.self);
  const creates = trace.records.filter((r) => r.method === 'POST' && r.status === 201);
  const n = creates.length;
  const r2 = (x) => +x.toFixed(2);
  const split = { total: [], sql: [], pool: [], redis: [], other: [], before_tx: [], in_tx: [], after_commit: [] };
  const byStatement = new Map();
  for (const c of creates) {
    const sum = (kind) => c.events.filter((e) => e.kind === kind).reduce((a, e) => a + e.ms, 0);
    const sql = sum('sql');
    const pool = sum('pool');
    const redis = sum('redis');
    split.total.push(c.ms);
    split.sql.push(sql);
    split.pool.push(pool);
    split.redis.push(redis);
    split.other.push(c.ms - sql - pool - redis);
    const begin = c.events.find((e) => e.kind === 'pool') ?? c.events.find((e) => e.kind === 'sql' && /^(BEGIN|START TRANSACTION)/i.test(e.label));
    const commit = c.events.filter((e) => e.kind === 'sql' && /^COMMIT/i.test(e.label)).pop();
    if (begin && commit) {
      split.before_tx.push(begin.at);
      split.in_tx.push(commit.at + commit.ms - begin.at);
      split.after_commit.push(c.ms - commit.at - commit.ms);
    }
    for (const e of c.events) {
      if (e.kind === 'pool') continue;
      const key = `${e.kind}: ${e.label.length > 160 ? `${e.label.slice(0, 160)}…` : e.label}`;
      const entry = byStatement.get(key) ?? { times: [] };
      entry.times.push(e.ms);
      byStatement.set(key, entry);
    }
  }
  const mean = (xs) => (xs.length ? r2(xs.reduce((a, b) => a + b, 0) / xs.length) : null);
  const statements = [...byStatement]
    .map(([label, { times }]) => ({
      label,
      per_create: r2(times.length / n),
      ms_per_create: r2(times.reduce((a, b) => a + b, 0) / n),
      ...lib.summariseMs(times),
    }))
    .sort((a, b) => b.ms_per_create - a.ms_per_create);
  return {
    creates: n,
    wall_s: r2(wallS),
    server_ms_per_create: Object.fromEntries(
      Object.entries(split).map(([k, xs]) => [k, { mean: mean(xs), p50: xs.length ? lib.summariseMs(xs).p50_ms : null }]),
    ),
    sql_statements_per_create: r2(creates.reduce((a, c) => a + c.events.filter((e) => e.kind === 'sql').length, 0) / n),
    redis_commands_per_create: r2(creates.reduce((a, c) => a + c.events.filter((e) => e.kind === 'redis').length, 0) / n),
    statements,
    welcome_mail: {
      sent: trace.mails.length,
      awaited_by_the_answer: trace.mails.filter((m) => m.before_answer).length,
      send_ms: trace.mails.length ? lib.summariseMs(trace.mails.map((m) => m.ms)) : null,
    },
    cpu_ms_per_create: {
      api: r2(trace.cpu_ms / n),
      postgres_backends: r2(cpuSince(meter.backends, backends) / n),
      load_generator_and_smtp_sink: r2((self.user + self.system) / 1000 / n),
    },
    sample: creates[0] ? { events: creates[0].events.map((e) => ({ ...e, at: r2(e.at), ms: r2(e.ms) })), statements: creates[0].statements } : null,
  };
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each statement of one traced create, replayed in one transaction
 * that is rolled back, for a new address (its address swapped into the parameters; ids returned by
 * one statement and used by the next stay those of the traced create; its externalId made
 * another): planning and execution
 * time in the server, and the time of each trigger fired.
 */
async function explainCreate(sample, address, replacement, externalId) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const swap = (v) =>
    v === externalId
      ? `x${externalId}`
      : typeof v === 'string'
        ? v.split(address).join(replacement).split(address.toLowerCase()).join(replacement.toLowerCase())
        : v;
  const out = [];
  try {
    await db.query('BEGIN');
    for (const st of sample.statements) {
      const text = st.text.replace(/\s+/g, ' ').trim();
      if (!/^(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(text)) continue;
      const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.text}`, st.values.map(swap));
      const plan = rows[0]['QUERY PLAN'][0];
      out.push({
        statement: text.length > 160 ? `${text.slice(0, 160)}…` : text,
        planning_ms: plan['Planning Time'],
        execution_ms: plan['Execution Time'],
        top_node: plan.Plan['Node Type'],
        triggers: (plan.Triggers ?? []).map((t) => ({ name: t['Trigger Name'], ms: t.Time, calls: t.Calls })),
      });
    }
  } finally {
    await db.query('ROLLBACK').catch(() => undefined);
    await db.end();
  }
  return out;
}

/** `count` creates one after another on one connection, traced: the service time without queueing. */
async function sequentialCreates(port, headers, domain, tracePort, count) {
  const meter = await startMeter(tracePort);
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

function breakdownMarkdown(b) {
  const c = b.concurrent;
  const q = b.sequential;
  const ms = (x) => (x === null || x === undefined ? '–' : x);
  const row = (name, t) => {
    const s = t.server_ms_per_create;
    return `| ${name} | ${t.creates} | ${s.total.mean} (p50 ${s.total.p50}) | ${s.sql.mean} (${t.sql_statements_per_create} statements) | ${s.pool.mean} | ${s.redis.mean} (${t.redis_commands_per_create}) | ${s.other.mean} | ${ms(s.before_tx.mean)} / ${ms(s.in_tx.mean)} / ${ms(s.after_commit.mean)} | ${t.cpu_ms_per_create.api} / ${t.cpu_ms_per_create.postgres_backends} / ${t.cpu_ms_per_create.load_generator_and_smtp_sink} |`;
  };
  const seqBy = new Map(c.statements.map((st) => [st.label, st]));
  const short = (label) => `\`${label.replace(/\|/g, '\\|').replace(/`/g, "'").slice(0, 110)}${label.length > 110 ? '…' : ''}\``;
  return [
    "**Where a create goes** (the api instrumented by the bench, see installTrace; mean ms per create of the server's time, request in to answer written):",
    '',
    '| run | creates | server ms | SQL ms | pool wait ms | Redis ms (commands) | rest (JS, event loop) ms | before BEGIN / BEGIN..COMMIT / after COMMIT ms | CPU ms per create: api / Postgres backends / load generator + SMTP sink |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row(`provisioning (${SETTINGS.provisioning_concurrency} connections)`, c),
    row('one at a time, at the end (1 connection)', q),
    '',
    `Welcome mails: ${c.welcome_mail.sent} sent during provisioning, ${c.welcome_mail.awaited_by_the_answer} of them finished before their create's answer was written (the rest after: the answer does not wait for them); one send (from Mailer.send to the sink's answer, through the pooled connections when the build pools them) p50 ${c.welcome_mail.send_ms?.p50_ms ?? '–'} ms, p99 ${c.welcome_mail.send_ms?.p99_ms ?? '–'} ms during provisioning.`,
    '',
    "Statements of a create, by time per create (call to answer as the pool's client sees it):",
    '',
    '| statement | per create | one at a time: ms per create | p50 ms | provisioning: ms per create | p50 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...q.statements.map((st) => {
      const cc = seqBy.get(st.label);
      return `| ${short(st.label)} | ${st.per_create} | ${st.ms_per_create} | ${st.p50_ms} | ${cc ? cc.ms_per_create : '–'} | ${cc ? cc.p50_ms : '–'} |`;
    }),
    '',
    'The same create replayed under `EXPLAIN (ANALYZE, BUFFERS)` (one transaction, rolled back; a new address), time inside Postgres:',
    '',
    '| statement | plan | planning ms | execution ms | triggers (ms) |',
    '|---|---|---:|---:|---|',
    ...b.explain.map(
      (e) =>
        `| ${short(e.statement)} | ${e.top_node} | ${e.planning_ms} | ${e.execution_ms} | ${e.triggers.map((t) => `${t.name} ${+t.ms.toFixed(3)}`).join(', ') || '–'} |`,
    ),
    '',
  ].join('\n');
}

function markdown(r) {
  const fmt = (n) => n.toLocaleString('en');
  const p = r.provisioning;
  return [
    `Run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}, load average before ${r.machine.load_average_1m_before}.`,
    `api: NODE_ENV=${SETTINGS.api_node_env}, LOG_LEVEL=${SETTINGS.api_log_level}, HTTPS keep-alive, local Postgres and Redis; the load generator on the same machine.`,
    '',
    `**Provisioning**: ${fmt(p.users)} users through \`POST /scim/v2/Users\` (Okta's create body, addresses on a verified domain so each is created, with its welcome email sent to a local SMTP sink), ${SETTINGS.provisioning_concurrency} concurrent connections: **${p.users_per_second} users/s** (${p.seconds} s); latency p50 ${p.latency.p50_ms} ms, p99 ${p.latency.p99_ms} ms. Welcome mails: ${r.welcome_mails_after_provisioning.received} of ${r.welcome_mails_after_provisioning.expected} received, the last ${r.welcome_mails_after_provisioning.waited_s} s after the last create.`,
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
    breakdownMarkdown(r.breakdown),
    '',
  ].join('\n');
}

async function main() {
  const load = +os.loadavg()[0].toFixed(2);
  if (load > 0.5) say(`warning: the machine is busy (load average ${load}): numbers will be noisy`);
  if (process.env.BENCH_SCIM_DIST) say(`using the build in ${distDir}`);
  else {
    say('building into .data/bench-scim/dist…');
    lib.compileInto(distDir);
  }
  await lib.recreateDatabase(server, DB_NAME);
  const tenant = lib.makeTenant(admin, { org: 'bench scim', connection: 'bench scim' });
  const domain = 'bench-scim.example';
  admin(['org', 'domain', tenant.organisationId, 'add', domain]);
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId} with ${domain} verified and a key`);
  const smtp = await smtpSink();
  const port = await lib.freePort(HOST);
  const tracePort = await lib.freePort(HOST);
  agent = lib.keepAliveAgent(SETTINGS.provisioning_concurrency);
  const api = lib.start(
    'api',
    [__filename, '--serve'],
    env({ ...(await ensureCert()), PORT: String(port), SMTP_URL: smtp.url, METRICS_PORT: '0', BENCH_SCIM_TRACE_PORT: String(tracePort) }),
  );
  const headers = { authorization: `Bearer ${tenant.key}` };
  let report;
  try {
    await waitReady(api, port);
    say(`provisioning ${SETTINGS.provisioned_users} users…`);
    const meter = await startMeter(tracePort);
    const provisioning = await provision(port, headers, domain);
    const concurrent = await stopMeter(tracePort, meter);
    const mailDrain = await drainMails(smtp, SETTINGS.provisioned_users);
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
    say(`${SETTINGS.traced_creates} creates one at a time, traced…`);
    const sequential = await sequentialCreates(port, headers, domain, tracePort, SETTINGS.traced_creates);
    const explain = await explainCreate(sequential.sample, `trace0@${domain}`, `explain0@${domain}`, 'tr0');
    report = {
      benchmark: 'SCIM: POST /scim/v2/Users provisioning and userName eq lookups at 10,000 and 100,000 users (HTTPS, keep-alive)',
      date: new Date().toISOString(),
      commit: lib.gitCommit(),
      machine: { load_average_1m_before: load, ...lib.machine() },
      settings: SETTINGS,
      provisioning,
      welcome_mails_received: smtp.received(),
      welcome_mails_after_provisioning: mailDrain,
      grow: grown,
      total_users: SETTINGS.total_users,
      sizes,
      breakdown: { concurrent, sequential, explain },
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

// ---- compare mode: two builds side by side ----

/**
 * `node bench/scim.bench.js --compare <distA> <distB>` (each a built dist inside this checkout, e.g.
 * of a `git worktree` of the old commit): both apis run at once on one database (migrated by B),
 * each with an organisation of its own; provisioning alternates between them in slices of
 * BENCH_SCIM_USERS ÷ BENCH_SCIM_ROUNDS creates (order swapped each round), then `userName eq`
 * lookups alternate the same way. Answers per build users/s, latency, statements and CPU per
 * create, and the median over rounds of B's users/s ÷ A's. Writes bench/results/scim-compare.*.
 */
async function compare(distA, distB) {
  const rounds = Number(process.env.BENCH_SCIM_ROUNDS || 10);
  const load = +os.loadavg()[0].toFixed(2);
  await lib.recreateDatabase(server, DB_NAME);
  const smtp = await smtpSink();
  agent = lib.keepAliveAgent(SETTINGS.provisioning_concurrency * 2);
  const tls = await ensureCert();
  const builds = [];
  for (const [name, dist] of [
    ['A', distA],
    ['B', distB],
  ]) {
    const adminOf = (args) => lib.admin(args, { dist: path.resolve(distB), env: env(), timeout: 120000 });
    const tenant = lib.makeTenant(adminOf, { org: `bench scim ${name}`, connection: `bench scim ${name}` });
    const domain = `${name.toLowerCase()}.bench-scim.example`;
    adminOf(['org', 'domain', tenant.organisationId, 'add', domain]);
    const port = await lib.freePort(HOST);
    const tracePort = await lib.freePort(HOST);
    const proc = lib.start(
      name,
      [__filename, '--serve'],
      env({ ...tls, PORT: String(port), SMTP_URL: smtp.url, METRICS_PORT: '0', BENCH_SCIM_TRACE_PORT: String(tracePort), BENCH_SCIM_DIST: path.resolve(dist) }),
    );
    builds.push({ name, dist, port, tracePort, proc, domain, headers: { authorization: `Bearer ${tenant.key}` }, slices: [], lookups: [], traces: [] });
  }
  try {
    for (const b of builds) await waitReady(b.proc, b.port);
    const per = Math.floor(SETTINGS.provisioned_users / rounds);
    const ratios = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const b of order) {
        const meter = await startMeter(b.tracePort);
        b.slices.push(await provisionSlice(b.port, b.headers, b.domain, round * per, per));
        b.traces.push(await stopMeter(b.tracePort, meter));
      }
      ratios.push(builds[1].slices[round].users_per_second / builds[0].slices[round].users_per_second);
      say(`round ${round + 1}/${rounds}: A ${builds[0].slices[round].users_per_second} users/s, B ${builds[1].slices[round].users_per_second} users/s`);
    }
    const population = per * rounds;
    const mailDrain = await drainMails(smtp, population * 2);
    say(`welcome mails: ${mailDrain.received} of ${mailDrain.expected}, the last ${mailDrain.waited_s} s after the last create`);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      for (const b of order) b.lookups.push(...(await lookupTimes(b.port, b.headers, b.domain, population, Math.ceil(SETTINGS.lookups / rounds))));
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const summary = builds.map((b) => {
      const times = b.slices.flatMap((x) => x.times);
      const seconds = b.slices.reduce((a, x) => a + x.seconds, 0);
      const t = b.traces;
      const avg = (f) => +(t.reduce((a, x) => a + f(x), 0) / t.length).toFixed(2);
      return {
        build: b.name,
        dist: path.relative(root, path.resolve(b.dist)),
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
      commit: lib.gitCommit(),
      machine: { load_average_1m_before: load, load_average_1m_after: +os.loadavg()[0].toFixed(2), ...lib.machine() },
      rounds,
      users_per_slice: per,
      concurrency: SETTINGS.provisioning_concurrency,
      builds: summary,
      median_ratio_b_over_a: +median(ratios).toFixed(3),
      ratios: ratios.map((r) => +r.toFixed(3)),
      welcome_mails_received: smtp.received(),
      welcome_mails_after_provisioning: mailDrain,
    };
    const md = [
      `Run ${report.date}, commit ${report.commit ?? '?'}, load average ${load} before and ${report.machine.load_average_1m_after} after; ${rounds} rounds of ${per} creates per build (${SETTINGS.provisioning_concurrency} connections), order alternating; then ${SETTINGS.lookups} \`userName eq\` lookups per build at ${population} users, alternating likewise.`,
      '',
      '| build | users/s | p50 ms | p99 ms | slices users/s (min–max) | SQL statements per create | server ms | SQL ms | CPU ms per create: api / Postgres / load generator + sink | lookup p50 ms | lookup p99 ms |',
      '|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|',
      ...summary.map(
        (b) =>
          `| ${b.build} (${b.dist}) | ${b.users_per_second} | ${b.latency.p50_ms} | ${b.latency.p99_ms} | ${Math.min(...b.slices_users_per_second)}–${Math.max(...b.slices_users_per_second)} | ${b.sql_statements_per_create} | ${b.server_ms_per_create} | ${b.sql_ms_per_create} | ${b.cpu_ms_per_create.api} / ${b.cpu_ms_per_create.postgres_backends} / ${b.cpu_ms_per_create.load_generator_and_smtp_sink} | ${b.lookup.p50_ms} | ${b.lookup.p99_ms} |`,
      ),
      '',
      `B ÷ A users/s, median over rounds: **${report.median_ratio_b_over_a}** (rounds: ${report.ratios.join(', ')}). Welcome mails: ${mailDrain.received} of ${mailDrain.expected} received, the last ${mailDrain.waited_s} s after the last create.`,
      '',
    ].join('\n');
    lib.writeResults('scim-compare', report, md, 'SCIM: two builds side by side');
    process.stdout.write(`\n${md}\nwritten: bench/results/scim-compare.json, bench/results/scim-compare.md\n`);
  } finally {
    for (const b of builds) await lib.stop(b.proc);
    await smtp.close();
    agent.destroy();
  }
}

if (process.argv.includes('--compare')) {
  const i = process.argv.indexOf('--compare');
  const [a, b] = process.argv.slice(i + 1, i + 3);
  if (!a || !b) throw new Error('usage: node bench/scim.bench.js --compare <distA> <distB>');
  lib.runMain(() => compare(a, b), { tag: 'bench:scim', giveUpMinutes: 30 });
} else if (process.argv.includes('--serve')) {
  serve().catch((err) => {
    process.stderr.write(`scim api failed to start: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exit(1);
  });
} else {
  lib.runMain(main, { tag: 'bench:scim', giveUpMinutes: 30 });
}
