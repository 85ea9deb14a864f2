#!/usr/bin/env node
// Fair delivery: one organisation's receiver hangs, another's answers at once (bench/receiver.js on
// 127.0.0.1:443, so it needs root). One worker (WEBHOOK_CONCURRENCY=50, WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK=10);
// the hanging receiver's events are made at once, and once the relay has turned them into
// deliveries, the fast receiver's events follow at a steady rate. Measured: the fast receiver's
// event-to-receipt time (p99 must stay under 1 s), its attempts' own durations and the most of its
// deliveries seen parked, and how many requests the hanging receiver holds at once (at most the cap).
// A control run with the cap out of reach (1000) shows what the cap prevents. It compiles the
// sources into .data/bench/fairness-dist first; its own database and Redis prefix.
//   node bench/fairness.bench.js
'use strict';
const path = require('node:path');
const Redis = require('ioredis');
const { Client } = require('pg');
const h = require('./harness');
const { writeReport } = require('./markdown');

const { sleep } = h;
const work = h.workDir('bench');
const distDir = path.join(work, 'fairness-dist');
const DB_NAME = 'integrations_bench_fairness';
const SETTINGS = {
  hanging_deliveries: Number(process.env.BENCH_HANGING || 5000),
  fast_deliveries: Number(process.env.BENCH_FAST || 5000),
  fast_rate_per_s: Number(process.env.BENCH_FAST_RATE || 200),
  hang_ms: 10_000,
  concurrency: 50,
  max_in_flight_per_webhook: 10,
  control: process.env.BENCH_CONTROL !== '0',
  control_fast_deliveries: 2000,
  control_wait_s: 30,
  worker_node_env: 'production',
  worker_log_level: 'warn',
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchfair',
};
const TARGET = { max_fast_p99_ms: 1000 };

const say = h.sayer('bench');
const env = (extra = {}) =>
  h.appEnv({ ...SETTINGS, node_env: SETTINGS.worker_node_env, log_level: SETTINGS.worker_log_level }, { dataDir: work }, { BENCH_DIST: distDir, ...extra });

/**
 * One run: a worker with `cap`, the hanging webhook's deliveries queued at once, then `fast` events
 * for the fast webhook at the steady rate; waits until the fast ones have all arrived (or `waitS`
 * after the last was emitted) and reports.
 */
async function run({ name, cap, fast, waitS }, ctx) {
  const { db, redis, receiver, tls, tenants } = ctx;
  await h.clearRedisPrefix(redis, SETTINGS.redis_prefix);
  await db.query(
    `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = 'webhook_removed', finished_at = now(), next_attempt_at = NULL WHERE state IN ('queued', 'waiting')`,
  );
  const healthPort = await h.freePort();
  const worker = h.start(
    'worker',
    [path.join(__dirname, 'app.js'), 'worker'],
    env({
      WORKER_HEALTH_PORT: String(healthPort),
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      WEBHOOK_CONCURRENCY: String(SETTINGS.concurrency),
      WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: String(cap),
      NODE_EXTRA_CA_CERTS: tls.TLS_CERT_FILE,
    }),
  );
  try {
    await h.waitWorkerReady(worker, healthPort);
    await receiver.reset();
    const parkedKey = `${SETTINGS.redis_prefix}:webhook-slots:{${tenants.hang.webhookId}}:parked`;
    say(`${name}: ${SETTINGS.hanging_deliveries} deliveries queued for the hanging receiver, then ${fast} fast events at ${SETTINGS.fast_rate_per_s}/s…`);
    const t0 = Date.now();
    const runStart = new Date(t0 - 1000).toISOString();
    await db.query(
      `INSERT INTO outbox_events (organisation_id, event, data)
       SELECT $1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)) FROM generate_series(1, $2::int)`,
      [tenants.hang.organisationId, SETTINGS.hanging_deliveries],
    );
    // How long the worker takes to park the hanging backlog (sampled every 250 ms while the fast events go out).
    let parkedAllAfterMs = null;
    let fastParkedMax = 0;
    let sampling = true;
    const fastParkedKey = `${SETTINGS.redis_prefix}:webhook-slots:{${tenants.fast.webhookId}}:parked`;
    const sampler = (async () => {
      while (sampling) {
        const n = await redis.zcard(parkedKey);
        if (parkedAllAfterMs === null && n >= SETTINGS.hanging_deliveries - cap) parkedAllAfterMs = Date.now() - t0;
        fastParkedMax = Math.max(fastParkedMax, await redis.zcard(fastParkedKey));
        await sleep(250);
      }
    })();
    // The backlog is queued (the relay has made the 5,000 deliveries) before the fast events start: the relay turns
    // outbox rows into deliveries oldest first, so events made while it works through a 5,000-event burst wait behind it
    // whoever their receiver is; that is the relay's cost, not the cap's, and is reported on its own.
    let relayed = 0;
    while (relayed < SETTINGS.hanging_deliveries) {
      await sleep(50);
      relayed = (
        await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND created_at >= $2`, [tenants.hang.webhookId, runStart])
      ).rows[0].n;
    }
    const relayedAfterMs = Date.now() - t0;
    const fastStart = Date.now();
    const emittedS = await h.atRate(fast, SETTINGS.fast_rate_per_s, () =>
      db.query(
        `INSERT INTO outbox_events (organisation_id, event, data) VALUES ($1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)))`,
        [tenants.fast.organisationId],
      ),
    );
    const until = Date.now() + waitS * 1000;
    let stats = await receiver.stats();
    while (stats.unique < fast && Date.now() < until) {
      await sleep(100);
      stats = await receiver.stats();
    }
    sampling = false;
    await sampler;
    const pairs = await receiver.latencies();
    const firstFiveS = pairs.filter(([occ]) => occ - fastStart < 5000).map(([, ms]) => ms);
    const [slots] = (
      await db.query(
        `SELECT count(*) FILTER (WHERE state = 'delivered')::int AS delivered,
                (SELECT count(*)::int FROM webhook_delivery_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id
                  WHERE x.webhook_id = $2 AND x.created_at >= $3) AS hang_attempts
           FROM webhook_deliveries WHERE webhook_id = $1 AND created_at >= $3`,
        [tenants.fast.webhookId, tenants.hang.webhookId, runStart],
      )
    ).rows;
    // How long the fast receiver's attempts took, as the worker logged them: with the cap, one webhook gets at most
    // `cap` attempts at once, so its rate is bounded by cap / attempt time (its own deliveries then wait parked).
    const durations = (
      await db.query(
        `SELECT a.duration_ms FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1 AND d.created_at >= $2`,
        [tenants.fast.webhookId, runStart],
      )
    ).rows.map((r) => r.duration_ms);
    const result = {
      name,
      cap,
      fast_events: fast,
      fast_emitted_in_s: Number(emittedS.toFixed(1)),
      fast_arrived: stats.unique,
      fast_delivered_in_postgres: slots.delivered,
      fast_latency: h.latencySummary(pairs.map(([, ms]) => ms)),
      fast_latency_first_5_s: h.latencySummary(firstFiveS),
      fast_attempt_duration: h.latencySummary(durations),
      fast_parked_most_sampled: fastParkedMax,
      hang_requests: stats.hang_requests,
      hang_max_in_flight: stats.hang_max_in_flight,
      hang_attempts_logged: slots.hang_attempts,
      hang_parked_at_end: await redis.zcard(parkedKey),
      hang_backlog_relayed_after_ms: relayedAfterMs,
      hang_backlog_parked_after_ms: parkedAllAfterMs,
    };
    say(`${name}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await h.stop(worker, 30_000);
  }
}

async function main() {
  say(`compiling the sources into ${path.relative(h.root, distDir)}…`);
  h.buildInto(distDir);
  const load = h.loadBefore(say);
  const tls = await h.ensureCert(work);
  say('starting the receivers on 127.0.0.1:443…');
  const receiver = await h.startReceiver(tls, { hangMs: SETTINGS.hang_ms, retryForMs: 600_000 });
  await h.recreateDatabase(SETTINGS.database_url);
  const admin = (args) => h.admin(args, { dist: distDir, env: env() });
  const db = new Client({ connectionString: SETTINGS.database_url });
  const redis = new Redis(SETTINGS.redis_url);
  const tenants = {};
  for (const kind of ['hang', 'fast']) {
    const { organisationId, connectionId } = h.makeTenant(admin, { org: `fairness bench ${kind}`, key: false });
    tenants[kind] = { organisationId, connectionId };
  }
  await db.connect();
  for (const kind of ['hang', 'fast']) {
    const { rows } = await db.query(
      `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, $3, '{conversation.ended}', $4) RETURNING id`,
      [tenants[kind].organisationId, tenants[kind].connectionId, `https://127.0.0.1/bench-${kind}`, `whsec_bench_${kind}`],
    );
    tenants[kind].webhookId = String(rows[0].id);
  }
  const ctx = { db, redis, receiver, tls, tenants };
  try {
    const runs = [await run({ name: 'with the cap', cap: SETTINGS.max_in_flight_per_webhook, fast: SETTINGS.fast_deliveries, waitS: 60 }, ctx)];
    if (SETTINGS.control) runs.push(await run({ name: 'control', cap: 1000, fast: SETTINGS.control_fast_deliveries, waitS: SETTINGS.control_wait_s }, ctx));
    const report = {
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { cpus: h.machine().cpus, cpu_model: h.machine().cpu_model ?? '?', node: process.version, load_average_1m_before: load },
      settings: SETTINGS,
      runs,
      targets: TARGET,
      target_met: { fast_p99: runs[0].fast_arrived === runs[0].fast_events && runs[0].fast_latency.p99_ms < TARGET.max_fast_p99_ms },
    };
    process.stdout.write(`\n${writeReport('fairness', report)}\n`);
  } finally {
    await h.stop(receiver.proc);
    await h.clearRedisPrefix(redis, SETTINGS.redis_prefix);
    redis.disconnect();
    await db.end();
  }
}

h.runMain(main, { tag: 'bench', giveUpMinutes: 15 });
