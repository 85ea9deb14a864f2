#!/usr/bin/env node
// Soak: the api and the worker as deployed (dist/apps/*/src/main.js, NODE_ENV=production,
// LOG_LEVEL=info) under a steady mix of REST, SCIM and webhook deliveries for SOAK_MINUTES
// (default 10). Every minute it records the calls made, the errors (any status other than the one
// expected, or a socket error), the p99 latency, and the api's and the worker's resident memory.
// Pass: error rate 0, the last minute's p99 within 1.2x of the second minute's, and each process's
// RSS growth after warm-up (the second minute's average to the last minute's) under 10%; every
// event delivered exactly once by the end.
//   node bench/soak.bench.js            (about 11 minutes; SOAK_MINUTES=2 for a quick look)
// Loopback only (the receiver listens on 127.0.0.2:443, so it needs root); a dedicated database it
// drops and recreates; its own build of the code; results to bench/results/soak.{json,md}.
'use strict';
const lib = require('./lib');
const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Pool } = require('pg');

const { root, withDb, sleep } = lib;
const work = path.join(root, '.data', 'bench-soak');
const distDir = path.join(work, 'dist');
const DB_NAME = 'integrations_bench_soak';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SETTINGS = {
  minutes: Number(process.env.SOAK_MINUTES || 10),
  /** Calls per second by kind: a steady, modest load a real tenant could make, not a saturation test. */
  rates_per_s: {
    'GET /v1/me': 20,
    'GET /v1/cases': 8,
    'POST /v1/cases': 6,
    'POST /scim/v2/Users': 4,
    'GET /scim/v2/Users?filter': 6,
    'outbox event -> delivery': 20,
  },
  node_env: 'production',
  log_level: 'info',
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchsoak',
  max_p99_ratio: 1.2,
  max_rss_growth: 0.1,
};
/** The receiver's loopback address: not 127.0.0.1, whose port 443 the test suite's receivers use. */
const RECEIVER_HOST = process.env.SOAK_RECEIVER_HOST || '127.0.0.2';
const say = (msg) => process.stdout.write(`[bench:soak] ${msg}\n`);

function env(extra = {}) {
  return {
    ...process.env,
    NODE_ENV: SETTINGS.node_env,
    LOG_LEVEL: SETTINGS.log_level,
    HOST: '127.0.0.1',
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    DATA_DIR: work,
    ...extra,
  };
}

/** Resident memory of a process in MiB (Linux /proc). */
function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? +(Number(m[1]) / 1024).toFixed(1) : NaN;
}

function startReceiver(tls) {
  const proc = lib.track(
    fork(path.join(__dirname, 'webhooks-receiver.js'), [], {
      env: { ...process.env, TLS_CERT_FILE: tls.TLS_CERT_FILE, TLS_KEY_FILE: tls.TLS_KEY_FILE, PORT: '443', HOST: RECEIVER_HOST },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const ask = (cmd, key) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m[key] !== undefined) {
          proc.off('message', on);
          resolve(m[key]);
        }
      };
      proc.on('message', on);
      proc.send({ cmd });
    });
  return new Promise((resolve, reject) => {
    proc.once('message', (m) => (m.ready ? resolve({ proc, stats: () => ask('stats', 'stats') }) : reject(new Error('receiver did not start'))));
    proc.once('exit', (code) => reject(new Error(`receiver exited with ${code} (port 443 needs root and must be free)`)));
  });
}

/** Fires `fn` `perSecond` times a second, evenly, until `stop()` says so; never waits for answers. */
function steady(perSecond, fn, stop) {
  const interval = 1000 / perSecond;
  let next = performance.now();
  return new Promise((resolve) => {
    const tick = () => {
      if (stop()) return resolve();
      const now = performance.now();
      while (next <= now) {
        next += interval;
        fn();
      }
      setTimeout(tick, Math.max(1, next - performance.now()));
    };
    tick();
  });
}

async function main() {
  say(`compiling the sources into ${path.relative(root, distDir)}…`);
  lib.compileInto(distDir);
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: load average is ${load.toFixed(2)}; numbers will be worse than on an idle machine`);
  await lib.recreateDatabase(server, DB_NAME);
  const tls = await lib.ensureCert(path.join(work, RECEIVER_HOST), RECEIVER_HOST);
  const admin = (args) => lib.admin(args, { dist: distDir, env: env() });
  const tenant = lib.makeTenant(admin, { org: 'soak' });
  const domain = 'soak.example';
  admin(['org', 'domain', tenant.organisationId, 'add', domain]);
  const receiver = await startReceiver(tls);

  const port = await lib.freePort();
  const healthPort = await lib.freePort();
  const api = lib.start(
    'api',
    [path.join(distDir, 'apps/api/src/main.js')],
    env({ PORT: String(port), METRICS_PORT: '0', ...tls, PUBLIC_BASE_URL: `https://localhost:${port}`, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' }),
  );
  const worker = lib.start(
    'worker',
    [path.join(distDir, 'apps/worker/src/main.js')],
    env({ WORKER_HEALTH_PORT: String(healthPort), WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', NODE_EXTRA_CA_CERTS: tls.TLS_CERT_FILE }),
  );
  // The request lines at info go to the children's stdout; the bench only needs them written, not shown.
  for (const p of [api, worker]) p.stdout.removeAllListeners('data').on('data', () => undefined);
  const agent = lib.keepAliveAgent(32);
  const auth = { authorization: `Bearer ${tenant.key}` };
  const call = (method, p, json) =>
    lib.request({
      port,
      method,
      path: p,
      headers: auth,
      json,
      agent,
      contentType: json && p.startsWith('/scim') ? 'application/scim+json' : 'application/json',
    });
  await lib.waitReady('api', api, () =>
    lib.request({ port, path: '/health/ready' }).then(
      (r) => r.status === 200,
      () => false,
    ),
  );
  await lib.waitWorkerReady(worker, healthPort);
  const hook = await call('POST', '/v1/webhooks', { url: `https://${RECEIVER_HOST}/soak`, events: ['conversation.ended'] });
  if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${hook.body}`);

  const db = new Pool({ connectionString: SETTINGS.database_url, max: 4 });
  say(
    `running ${SETTINGS.minutes} minutes of ${Object.entries(SETTINGS.rates_per_s)
      .map(([k, v]) => `${v}/s ${k}`)
      .join(', ')}…`,
  );

  const minutes = [];
  const current = () => minutes[minutes.length - 1];
  const newMinute = () => minutes.push({ calls: 0, errors: 0, error_samples: [], times: [], rss_api: [], rss_worker: [] });
  newMinute();
  let seq = 0;
  let events = 0;
  const pending = new Set();
  const measure = (promise, expected) => {
    const m = current();
    const p = promise.then(
      (r) => {
        m.calls++;
        m.times.push(r.ms);
        if (!expected.includes(r.status)) {
          m.errors++;
          if (m.error_samples.length < 5) m.error_samples.push(`${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
        }
      },
      (err) => {
        m.calls++;
        m.errors++;
        if (m.error_samples.length < 5) m.error_samples.push(String(err.message || err));
      },
    );
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  const kinds = {
    'GET /v1/me': () => measure(call('GET', '/v1/me'), [200]),
    'GET /v1/cases': () => measure(call('GET', '/v1/cases?limit=20'), [200]),
    'POST /v1/cases': () => measure(call('POST', '/v1/cases', { external_ref: `soak-${process.pid}-${++seq}`, title: 'Soak case' }), [201]),
    'POST /scim/v2/Users': () => {
      const n = ++seq;
      const userName = `soak${n}@${domain}`;
      measure(
        call('POST', '/scim/v2/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName,
          name: { givenName: 'Soak', familyName: `User ${n}` },
          emails: [{ value: userName, primary: true }],
          active: true,
        }),
        [201],
      );
    },
    'GET /scim/v2/Users?filter': () =>
      measure(call('GET', `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "soak${Math.max(1, seq - 3)}@${domain}"`)}`), [200]),
    'outbox event -> delivery': () => {
      events++;
      const m = current();
      db.query(
        `INSERT INTO outbox_events (organisation_id, event, data) VALUES ($1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)))`,
        [tenant.organisationId],
      ).catch((err) => {
        m.errors++;
        if (m.error_samples.length < 5) m.error_samples.push(`outbox insert: ${err.message}`);
      });
    },
  };
  const end = Date.now() + SETTINGS.minutes * 60_000;
  const stop = () => Date.now() >= end;
  const sampler = setInterval(() => {
    current().rss_api.push(rssMiB(api.pid));
    current().rss_worker.push(rssMiB(worker.pid));
  }, 5000);
  const ticker = setInterval(() => {
    const m = current();
    say(
      `minute ${minutes.length}: ${m.calls} calls, ${m.errors} errors, p99 ${lib.summariseMs(m.times.length ? m.times : [0]).p99_ms} ms, rss api ${m.rss_api.at(-1)} MiB, worker ${m.rss_worker.at(-1)} MiB`,
    );
    if (!stop()) newMinute();
  }, 60_000);
  await Promise.all(Object.entries(SETTINGS.rates_per_s).map(([kind, rate]) => steady(rate, kinds[kind], stop)));
  clearInterval(ticker);
  clearInterval(sampler);
  await Promise.allSettled([...pending]);

  // Every event delivered, once.
  let got = await receiver.stats();
  for (const until = Date.now() + 120_000; got.unique < events && Date.now() < until; await sleep(500)) got = await receiver.stats();
  const [{ delivered, attempts }] = (
    await db.query(
      `SELECT (SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered')::int AS delivered, (SELECT count(*) FROM webhook_delivery_attempts)::int AS attempts`,
    )
  ).rows;
  await db.end();

  const avg = (xs) => (xs.length ? +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1) : NaN);
  const perMinute = minutes
    .filter((m) => m.calls > 0)
    .map((m, i) => ({
      minute: i + 1,
      calls: m.calls,
      errors: m.errors,
      error_samples: m.error_samples,
      ...lib.summariseMs(m.times),
      rss_api_mib: avg(m.rss_api),
      rss_worker_mib: avg(m.rss_worker),
    }));
  const second = perMinute[1] ?? perMinute[0];
  const last = perMinute[perMinute.length - 1];
  const totalCalls = perMinute.reduce((a, m) => a + m.calls, 0);
  const totalErrors = perMinute.reduce((a, m) => a + m.errors, 0);
  const growth = (a, b) => +((b - a) / a).toFixed(3);
  const report = {
    bench: 'soak',
    commit: lib.gitCommit(),
    date: new Date().toISOString(),
    machine: { ...lib.machine(), load_average_at_start: +load.toFixed(2) },
    settings: SETTINGS,
    per_minute: perMinute,
    totals: {
      calls: totalCalls,
      errors: totalErrors,
      error_rate: totalCalls ? totalErrors / totalCalls : 0,
      events,
      received: got.count,
      received_unique: got.unique,
      delivered,
      attempts,
    },
    p99_ratio_last_to_second: +(last.p99_ms / second.p99_ms).toFixed(2),
    rss_growth: { api: growth(second.rss_api_mib, last.rss_api_mib), worker: growth(second.rss_worker_mib, last.rss_worker_mib) },
  };
  // Stability needs a warm-up minute, a second minute and a later one to compare with it.
  const judged = perMinute.length >= 3;
  report.target_met = {
    no_errors: totalErrors === 0,
    p99_stable: judged ? report.p99_ratio_last_to_second <= SETTINGS.max_p99_ratio : null,
    rss_flat: judged ? report.rss_growth.api < SETTINGS.max_rss_growth && report.rss_growth.worker < SETTINGS.max_rss_growth : null,
    every_event_once: got.unique === events && got.count === events,
  };
  const ok = (b) => (b === null ? 'not judged (fewer than 3 minutes)' : b ? 'met' : '**not met**');
  const md = [
    `Commit ${report.commit}, ${report.date}; ${report.machine.cpus} × ${report.machine.cpu_model}, Node ${report.machine.node}; load average ${report.machine.load_average_at_start} at the start.`,
    `api and worker as deployed (NODE_ENV=${SETTINGS.node_env}, LOG_LEVEL=${SETTINGS.log_level}: a request line per call), local Postgres and Redis, receiver on ${RECEIVER_HOST}:443; ${SETTINGS.minutes} minutes of ${Object.entries(
      SETTINGS.rates_per_s,
    )
      .map(([k, v]) => `${v}/s ${k}`)
      .join(', ')} (events are inserted into the outbox with SQL, as the domain does).`,
    '',
    '| minute | calls | errors | p50 ms | p99 ms | max ms | api RSS MiB | worker RSS MiB |',
    '|---|---|---|---|---|---|---|---|',
    ...perMinute.map((m) => `| ${m.minute} | ${m.calls} | ${m.errors} | ${m.p50_ms} | ${m.p99_ms} | ${m.max_ms} | ${m.rss_api_mib} | ${m.rss_worker_mib} |`),
    '',
    `- error rate ${report.totals.error_rate} (${totalErrors} of ${totalCalls}): ${ok(report.target_met.no_errors)}`,
    `- p99 last minute / second minute = ${report.p99_ratio_last_to_second} (≤ ${SETTINGS.max_p99_ratio}): ${ok(report.target_met.p99_stable)}`,
    `- RSS growth after warm-up (second minute to last): api ${(report.rss_growth.api * 100).toFixed(1)}%, worker ${(report.rss_growth.worker * 100).toFixed(1)}% (< ${SETTINGS.max_rss_growth * 100}%): ${ok(report.target_met.rss_flat)}`,
    `- deliveries: ${events} events, ${got.count} received (${got.unique} distinct), ${delivered} delivered, ${attempts} attempts logged: ${ok(report.target_met.every_event_once)}`,
    '',
  ].join('\n');
  lib.writeResults('soak', report, md, 'Soak');
  say(md);
}

lib.runMain(main, { tag: 'bench:soak', giveUpMinutes: SETTINGS.minutes + 10 });
