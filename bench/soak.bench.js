#!/usr/bin/env node
// Soak: the api and the worker as deployed (their entry points in a build of the bench's own,
// NODE_ENV=production, LOG_LEVEL=info) under a steady mix of REST, SCIM and webhook deliveries (to
// bench/receiver.js on 127.0.0.2:443, so it needs root) for SOAK_MINUTES. Every minute: the calls
// made, the errors (any status other than the one expected, or a socket error), p50/p99/max, and the
// api's and the worker's resident memory. Pass: error rate 0; the last minute's p99 within 1.2× of
// the second minute's; each process's RSS growth from the second minute to the last under 10%;
// every event delivered exactly once by the end.
//   node bench/soak.bench.js
'use strict';
const { Pool } = require('pg');
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');

const { sleep } = h;
const work = h.workDir('bench-soak');
const distDir = path.join(work, 'dist');
const DB_NAME = 'integrations_bench_soak';
const SETTINGS = {
  minutes: Number(process.env.SOAK_MINUTES || 10),
  rates_per_s: h.SOAK_RATES,
  node_env: 'production',
  log_level: 'info',
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchsoak',
  max_p99_ratio: 1.2,
  max_rss_growth: 0.1,
};
/** The receiver's loopback address: not 127.0.0.1, whose port 443 the test suite's receivers use. */
const RECEIVER_HOST = process.env.SOAK_RECEIVER_HOST || '127.0.0.2';
const say = h.sayer('bench:soak');
const env = (extra = {}) => h.appEnv(SETTINGS, { dataDir: work }, extra);

async function main() {
  say(`compiling the sources into ${path.relative(h.root, distDir)}…`);
  h.buildInto(distDir);
  const load = h.loadBefore(say);
  await h.recreateDatabase(SETTINGS.database_url);
  const tls = await h.ensureCert(path.join(work, RECEIVER_HOST), RECEIVER_HOST);
  const admin = (args) => h.admin(args, { dist: distDir, env: env() });
  const domain = 'soak.example';
  const tenant = h.makeTenant(admin, { org: 'soak', domain });
  const receiver = await h.startReceiver(tls, { host: RECEIVER_HOST });

  // The request lines at info go to the children's stdout; the bench only needs them written, not shown.
  const port = await h.freePort();
  const { proc: api } = await h.startApi('api', {
    dist: distDir,
    port,
    env: env({ METRICS_PORT: '0', ...tls, PUBLIC_BASE_URL: `https://localhost:${port}`, WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8' }),
    dropStdout: true,
  });
  const healthPort = await h.freePort();
  const worker = h.start(
    'worker',
    [h.entry(distDir, 'worker')],
    env({ WORKER_HEALTH_PORT: String(healthPort), WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8', NODE_EXTRA_CA_CERTS: tls.TLS_CERT_FILE }),
    { dropStdout: true },
  );
  await h.waitWorkerReady(worker, healthPort);
  const agent = h.keepAliveAgent(32);
  const auth = { authorization: `Bearer ${tenant.key}` };
  const call = (method, p, json) =>
    h.request({ port, method, path: p, headers: auth, json, agent, contentType: json && p.startsWith('/scim') ? 'application/scim+json' : 'application/json' });
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
  const kinds = h.soakMix({
    call,
    measure,
    tag: 'soak',
    domain,
    event: () => {
      events++;
      const m = current();
      h.insertOutboxEvent(db, tenant.organisationId).catch((err) => {
        m.errors++;
        if (m.error_samples.length < 5) m.error_samples.push(`outbox insert: ${err.message}`);
      });
    },
  });
  const end = Date.now() + SETTINGS.minutes * 60_000;
  const stop = () => Date.now() >= end;
  const sampler = setInterval(() => {
    current().rss_api.push(h.rssMiB(api.pid));
    current().rss_worker.push(h.rssMiB(worker.pid));
  }, 5000);
  const ticker = setInterval(() => {
    const m = current();
    say(
      `minute ${minutes.length}: ${m.calls} calls, ${m.errors} errors, p99 ${h.summariseMs(m.times.length ? m.times : [0]).p99_ms} ms, rss api ${m.rss_api.at(-1)} MiB, worker ${m.rss_worker.at(-1)} MiB`,
    );
    if (!stop()) newMinute();
  }, 60_000);
  await Promise.all(Object.entries(SETTINGS.rates_per_s).map(([kind, rate]) => h.steady(rate, kinds[kind], stop)));
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
      ...h.summariseMs(m.times),
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
    commit: h.gitCommit(),
    date: new Date().toISOString(),
    machine: { ...h.machine(), load_average_at_start: load },
    settings: SETTINGS,
    receiver_host: RECEIVER_HOST,
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
  say(writeReport('soak', report));
}

h.runMain(main, { tag: 'bench:soak', giveUpMinutes: SETTINGS.minutes + 10 });
