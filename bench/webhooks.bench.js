#!/usr/bin/env node
// Webhook deliveries per second and event-to-receipt latency, beside a bare undici loop posting the
// same signed bodies to the same local HTTPS receiver in the same run:
//   node bench/webhooks.bench.js
// It compiles the current sources into .data/bench/webhooks-dist first (swc, about a second), so it
// neither needs nor disturbs `npm run build`'s dist/.
// Loopback only (the receiver listens on 127.0.0.1:443, so it needs root); it stops by itself and
// kills its children on the way out. Results: bench/results/webhooks.{json,md}.
'use strict';
const lib = require('./lib');
const { fork } = require('node:child_process');
const { createHmac, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');
const { Agent, request } = require('undici');

const { root, sleep } = lib;
const work = path.join(root, '.data', 'bench');
const distDir = path.join(work, 'webhooks-dist');
const SETTINGS = {
  deliveries: Number(process.env.BENCH_DELIVERIES || 20_000),
  warmup: Number(process.env.BENCH_WARMUP_DELIVERIES || 2_000),
  concurrency: Number(process.env.BENCH_CONCURRENCY || 50),
  rate_per_s: Number(process.env.BENCH_RATE || 200),
  rate_seconds: Number(process.env.BENCH_RATE_SECONDS || 10),
  worker_node_env: 'production',
  worker_log_level: 'warn',
  worker_db_pool: Number(process.env.BENCH_DB_POOL || 20),
  database_url: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench_webhooks',
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchwh',
};
const TARGET = { min_ratio_to_bare: 0.25, max_p50_ms: 50, max_p99_ms: 250 };
const SECRET = `whsec_${randomBytes(32).toString('base64url')}`;

const say = (msg) => process.stdout.write(`[bench] ${msg}\n`);
const sign = (t, body) => `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;

/** The receiver's certificate (127.0.0.1), shared with the other benchmarks. */
async function ensureCert() {
  const { TLS_CERT_FILE: cert, TLS_KEY_FILE: key } = await lib.ensureCert(work);
  return { cert, key };
}

function baseEnv(extra = {}) {
  return {
    ...process.env,
    NODE_ENV: SETTINGS.worker_node_env,
    LOG_LEVEL: SETTINGS.worker_log_level,
    HOST: '127.0.0.1',
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    DATA_DIR: work,
    BENCH_DIST_DIR: distDir,
    ...extra,
  };
}

const admin = (args) => lib.admin(args, { dist: distDir, env: baseEnv() });

/** The receiver in its own process, so it does not share a core's event loop with the senders it measures. */
async function startReceiver(tls) {
  const proc = fork(path.join(__dirname, 'webhooks-receiver.js'), [], {
    env: { ...process.env, TLS_CERT_FILE: tls.cert, TLS_KEY_FILE: tls.key, PORT: '443' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  lib.track(proc);
  const ask = (cmd) =>
    new Promise((resolve) => {
      const onMessage = (m) => {
        if (m[cmd === 'reset' ? 'reset' : cmd]) {
          proc.off('message', onMessage);
          resolve(m[cmd === 'reset' ? 'reset' : cmd]);
        }
      };
      proc.on('message', onMessage);
      proc.send({ cmd });
    });
  await new Promise((resolve, reject) => {
    proc.once('message', (m) => (m.ready ? resolve() : reject(new Error('receiver did not start'))));
    proc.once('exit', (code) => reject(new Error(`receiver exited with ${code} (port 443 needs root and must be free)`)));
  });
  return { proc, reset: () => ask('reset'), stats: () => ask('stats'), latencies: () => ask('latencies') };
}

async function waitReceived(receiver, count, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await receiver.stats();
    if (s.count >= count) return s;
    if (Date.now() > until) throw new Error(`receiver got ${s.count} of ${count} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** The reference: one undici Agent (keep-alive), `concurrency` loops posting signed bodies of the delivery shape. */
async function bareLoop(tls, count) {
  const agent = new Agent({ connect: { ca: fs.readFileSync(tls.cert), rejectUnauthorized: true } });
  let sent = 0;
  let failed = 0;
  const started = performance.now();
  const one = async () => {
    while (sent < count) {
      sent++;
      const body = JSON.stringify({
        id: randomBytes(16).toString('hex'),
        event: 'conversation.ended',
        occurred_at: new Date().toISOString(),
        data: { conversation_id: randomBytes(16).toString('hex') },
      });
      const t = Math.floor(Date.now() / 1000);
      const res = await request('https://127.0.0.1/bench-bare', {
        method: 'POST',
        dispatcher: agent,
        body,
        signal: AbortSignal.timeout(10_000),
        headers: { 'content-type': 'application/json', 'service-signature': sign(t, body) },
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) failed++;
    }
  };
  await Promise.all(Array.from({ length: SETTINGS.concurrency }, one));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  if (failed) throw new Error(`bare loop: ${failed} non-2xx answers`);
  return { deliveries: count, seconds, per_second: Math.round(count / seconds) };
}

/** The worker's health endpoint is plain HTTP. */
const waitHealthy = (proc, port) =>
  lib.waitReady(
    'worker',
    proc,
    () =>
      new Promise((resolve) => {
        http
          .get(`http://127.0.0.1:${port}/health/ready`, (res) => {
            res.resume();
            resolve(res.statusCode === 200);
          })
          .on('error', () => resolve(false));
      }),
  );

function markdown(r) {
  const s = r.settings;
  const ok = (b) => (b ? 'met' : '**not met**');
  return [
    `- run ${r.date} on ${r.machine.cpus} × ${r.machine.cpu_model}, node ${r.machine.node}, commit ${r.commit ?? '?'}, load average before ${r.machine.load_average_1m_before}`,
    `- receiver: node:https on 127.0.0.1:443 in its own process, answering 204; worker: NODE_ENV=${s.worker_node_env}, LOG_LEVEL=${s.worker_log_level}, WEBHOOK_CONCURRENCY=${s.concurrency}, DATABASE_POOL_SIZE=${s.worker_db_pool}, local Postgres and Redis; everything on the same machine`,
    '',
    '| what | deliveries | seconds | per second |',
    '|---|---:|---:|---:|',
    `| bare undici loop (one Agent, ${s.concurrency} in flight, signed bodies) | ${r.bare.deliveries} | ${r.bare.seconds.toFixed(2)} | ${r.bare.per_second} |`,
    `| worker: outbox → relay → BullMQ → signed POST, every attempt logged in Postgres | ${r.worker.deliveries} | ${r.worker.seconds.toFixed(2)} | ${r.worker.per_second} |`,
    '',
    `Ratio worker / bare: **${Math.round(r.ratio * 100)}%** (target ≥ ${TARGET.min_ratio_to_bare * 100}%: ${ok(r.target_met.ratio)}).`,
    '',
    `Event-to-receipt at ${s.rate_per_s} events/s for ${s.rate_seconds} s (${r.latency.events} events; from the event's \`occurred_at\`, written by Postgres, to the receiver's clock): ` +
      `p50 **${r.latency.p50_ms} ms** (target < ${TARGET.max_p50_ms}: ${ok(r.target_met.p50)}), p99 **${r.latency.p99_ms} ms** (target < ${TARGET.max_p99_ms}: ${ok(r.target_met.p99)}), max ${r.latency.max_ms} ms.`,
    '',
    `Logged: ${r.checks.attempts_logged} attempts and ${r.checks.delivered} delivered deliveries for ${r.checks.expected} events.`,
  ].join('\n');
}

async function main() {
  say(`compiling the sources into ${path.relative(root, distDir)}…`);
  lib.compileInto(distDir);
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: load average is ${load.toFixed(2)}; numbers will be lower than on an idle machine`);
  const tls = await ensureCert();

  const { applied, organisationId, connectionId } = lib.makeTenant(admin, { org: `webhook bench ${new Date().toISOString()}`, key: false });
  say(`migrated ${SETTINGS.database_url}${applied.length ? ` (applied ${applied.join(', ')})` : ''}`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const [hook] = (
    await db.query(
      `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, 'https://127.0.0.1/bench-worker', '{conversation.ended}', $3) RETURNING id`,
      [organisationId, connectionId, SECRET],
    )
  ).rows;

  const receiver = await startReceiver(tls);
  say(`bare undici loop: ${SETTINGS.warmup} warm-up, then ${SETTINGS.deliveries} measured…`);
  await bareLoop(tls, SETTINGS.warmup);
  const bare = await bareLoop(tls, SETTINGS.deliveries);
  say(`bare undici loop: ${bare.per_second}/s`);

  const healthPort = await lib.freePort();
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS || '').split(' ').filter(Boolean);
  const worker = lib.start(
    'worker',
    [...nodeArgs, path.join(__dirname, 'webhooks-worker.js')],
    baseEnv({
      WORKER_HEALTH_PORT: String(healthPort),
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      WEBHOOK_CONCURRENCY: String(SETTINGS.concurrency),
      DATABASE_POOL_SIZE: String(SETTINGS.worker_db_pool),
      NODE_EXTRA_CA_CERTS: tls.cert,
    }),
  );
  try {
    await waitHealthy(worker, healthPort);
    const emit = (n) =>
      db.query(
        `INSERT INTO outbox_events (organisation_id, event, data)
         SELECT $1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)) FROM generate_series(1, $2::int)`,
        [organisationId, n],
      );

    say(`worker: ${SETTINGS.warmup} warm-up deliveries…`);
    await receiver.reset();
    await emit(SETTINGS.warmup);
    await waitReceived(receiver, SETTINGS.warmup, 120_000);

    say(`worker: ${SETTINGS.deliveries} events at once, timed until the receiver has them all…`);
    await receiver.reset();
    const started = performance.now();
    await emit(SETTINGS.deliveries);
    const got = await waitReceived(receiver, SETTINGS.deliveries, 600_000);
    const seconds = (performance.now() - started) / 1000;
    const workerResult = { deliveries: SETTINGS.deliveries, seconds, per_second: Math.round(SETTINGS.deliveries / seconds), unique_ids: got.unique };
    say(`worker: ${workerResult.per_second}/s (${got.unique} distinct delivery ids)`);

    const events = SETTINGS.rate_per_s * SETTINGS.rate_seconds;
    say(`latency: ${SETTINGS.rate_per_s} events/s for ${SETTINGS.rate_seconds} s…`);
    await sleep(1000);
    await receiver.reset();
    const t0 = performance.now();
    for (let i = 0; i < events; i++) {
      const due = t0 + (i * 1000) / SETTINGS.rate_per_s;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      await db.query(
        `INSERT INTO outbox_events (organisation_id, event, data) VALUES ($1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)))`,
        [organisationId],
      );
    }
    await waitReceived(receiver, events, 120_000);
    const lat = (await receiver.latencies()).sort((a, b) => a - b);
    const latency = {
      events,
      p50_ms: lib.quantile(lat, 0.5),
      p99_ms: lib.quantile(lat, 0.99),
      max_ms: lat[lat.length - 1],
      mean_ms: Math.round(lat.reduce((a, b) => a + b, 0) / lat.length),
    };
    say(`latency: p50 ${latency.p50_ms} ms, p99 ${latency.p99_ms} ms, max ${latency.max_ms} ms`);

    await sleep(1000);
    const expected = SETTINGS.warmup + SETTINGS.deliveries + events;
    const [counts] = (
      await db.query(
        `SELECT count(*) FILTER (WHERE d.state = 'delivered')::int AS delivered,
                (SELECT count(*)::int FROM webhook_delivery_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id WHERE x.webhook_id = $1) AS attempts
           FROM webhook_deliveries d WHERE d.webhook_id = $1`,
        [hook.id],
      )
    ).rows;
    const ratio = workerResult.per_second / bare.per_second;
    const report = {
      date: new Date().toISOString(),
      commit: lib.gitCommit(),
      machine: { cpus: os.cpus().length, cpu_model: os.cpus()[0]?.model ?? '?', node: process.version, load_average_1m_before: Number(load.toFixed(2)) },
      settings: SETTINGS,
      bare,
      worker: workerResult,
      ratio: Number(ratio.toFixed(3)),
      latency,
      checks: { expected, delivered: counts.delivered, attempts_logged: counts.attempts },
      targets: TARGET,
      target_met: { ratio: ratio >= TARGET.min_ratio_to_bare, p50: latency.p50_ms < TARGET.max_p50_ms, p99: latency.p99_ms < TARGET.max_p99_ms },
    };
    lib.writeResults('webhooks', report, `${markdown(report)}\n`);
    process.stdout.write(`\n${markdown(report)}\n\n`);
    say('written to bench/results/webhooks.{json,md}');
  } finally {
    await lib.stop(worker, 30_000); // the worker drains for up to 25 s
    receiver.proc.kill('SIGTERM');
    await db.query(
      `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = 'webhook_removed', finished_at = now(), next_attempt_at = NULL WHERE webhook_id = $1 AND state IN ('queued', 'waiting')`,
      [hook.id],
    );
    await db.query(`UPDATE webhooks SET deleted_at = now(), secret = '' WHERE id = $1`, [hook.id]);
    await db.end();
  }
}

// Its own way out: no overall time limit (each wait above has its own); children killed, not stopped.
const { killAll } = lib;
process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});
main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`[bench] failed: ${err.stack || err}\n`);
    killAll();
    process.exit(1);
  },
);
