// Where a SCIM create goes: instruments inside the api child (bench/app.js api with
// BENCH_TRACE_PORT; nothing in the product) and their reading in the bench.
// In the api: every request runs in an AsyncLocalStorage context of its own, and while tracing is on
// each pg query (call to answer, as the pool's client sees it: network, parse, execution, lock
// waits), each wait for a pooled connection, each Redis command and each Mailer.send is timed into
// the request that made it. A loopback control server turns it on (POST /on) and answers the
// per-request records and the process's CPU time since (POST /off). Its cost: one
// performance.now() pair per query.
// In the bench: startMeter and stopMeter around a phase (with this process's CPU time and that of the
// database's Postgres backends), explainCreate to replay one create under EXPLAIN, breakdownMarkdown.
'use strict';
const { cpuOfPids, cpuSince, summariseMs } = require('./harness/measure');

// ---- in the api child ----

/** The instruments, on the built code `code` (bench/harness/built.js): answers {attach(server, port)}. */
function install(code) {
  const { AsyncLocalStorage } = require('node:async_hooks');
  const http = require('node:http');
  const { performance } = require('node:perf_hooks');
  const pg = require('pg');
  const Redis = require('ioredis');
  const { Mailer } = code;
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
      return new Promise((resolve) => control.listen(port, '127.0.0.1', resolve));
    },
  };
}

// ---- in the bench ----

/** POST to the api child's trace control server (see install). */
function traceControl(port, what) {
  const http = require('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/${what}` }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CPU time (ms) of the Postgres backends of the database at `databaseUrl`, by pid. */
async function backendCpu(databaseUrl) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    const { rows } = await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [name]);
    return cpuOfPids(rows.map((r) => r.pid));
  } finally {
    await db.end();
  }
}

/** Starts the instruments: the api's trace, this process's CPU time and the database backends'. */
async function startMeter(tracePort, databaseUrl) {
  const backends = await backendCpu(databaseUrl);
  await traceControl(tracePort, 'on');
  return { databaseUrl, backends, self: process.cpuUsage(), started: process.hrtime.bigint() };
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
  const backends = await backendCpu(meter.databaseUrl);
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
      ...summariseMs(times),
    }))
    .sort((a, b) => b.ms_per_create - a.ms_per_create);
  return {
    creates: n,
    wall_s: r2(wallS),
    server_ms_per_create: Object.fromEntries(Object.entries(split).map(([k, xs]) => [k, { mean: mean(xs), p50: xs.length ? summariseMs(xs).p50_ms : null }])),
    sql_statements_per_create: r2(creates.reduce((a, c) => a + c.events.filter((e) => e.kind === 'sql').length, 0) / n),
    redis_commands_per_create: r2(creates.reduce((a, c) => a + c.events.filter((e) => e.kind === 'redis').length, 0) / n),
    statements,
    welcome_mail: {
      sent: trace.mails.length,
      awaited_by_the_answer: trace.mails.filter((m) => m.before_answer).length,
      send_ms: trace.mails.length ? summariseMs(trace.mails.map((m) => m.ms)) : null,
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
async function explainCreate(databaseUrl, sample, address, replacement, externalId) {
  const { Client } = require('pg');
  const db = new Client({ connectionString: databaseUrl });
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

function breakdownMarkdown(b, concurrency) {
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
    "**Where a create goes** (the api instrumented by the bench, see bench/scim-trace.js; mean ms per create of the server's time, request in to answer written):",
    '',
    '| run | creates | server ms | SQL ms | pool wait ms | Redis ms (commands) | rest (JS, event loop) ms | before BEGIN / BEGIN..COMMIT / after COMMIT ms | CPU ms per create: api / Postgres backends / load generator + SMTP sink |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row(`provisioning (${concurrency} connections)`, c),
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

module.exports = { breakdownMarkdown, explainCreate, install, startMeter, stopMeter };
