#!/usr/bin/env node
// Recovery after a receiver outage: one webhook with BENCH_RECOVER_DELIVERIES given-up deliveries
// (seeded with SQL, made over the hour before), then `POST /v1/webhooks/{id}/recover` called with
// the hour's start, again while the answer says `more`, as a partner's script would, against the
// built api and worker (their entry points, the product's delivery settings) and a local HTTPS
// receiver (bench/receiver.js on BENCH_RECEIVER_HOST:443, so it needs root). Measured from just
// before the first call: when the receiver gets its first delivery, when it has them all, and every
// call's answer; checked: each delivery received exactly once (by its id), and each recorded
// delivered with one attempt in its new series. Runs BENCH_DIST (default dist/); with
// BENCH_CPU_PROFILE (a directory), a V8 CPU profile of the worker.
//   npm run build && node bench/webhooks-recover.bench.js
'use strict';
const { randomBytes, randomUUID } = require('node:crypto');
const path = require('node:path');
const { Client } = require('pg');
const h = require('./harness');
const { writeReport } = require('./markdown');

const { round2, sleep } = h;
const work = h.workDir('bench-recover');
const SETTINGS = {
  deliveries: Number(process.env.BENCH_RECOVER_DELIVERIES || 10_000),
  /** The bound: every delivery received within this many seconds of the first call. */
  within_s: 60,
  /** Not 127.0.0.1, whose port 443 the test suite binds. */
  receiver_host: process.env.BENCH_RECEIVER_HOST || '127.0.0.2',
  /** After the last receipt, how long the receiver is watched for one sent twice. */
  settle_s: Number(process.env.BENCH_RECOVER_SETTLE_S || 3),
  node_env: 'production',
  log_level: 'warn',
  database_url: process.env.BENCH_DATABASE_URL || h.databaseUrl('integrations_bench_recover'),
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchrecover',
};
const say = h.sayer('recover');
const env = (extra = {}) => h.appEnv(SETTINGS, { dataDir: work }, { ...h.UNLIMITED, ...extra });

/** `n` given-up deliveries of `hook` (switched off during the outage), made evenly over the hour before `now`, oldest first. */
async function seed(db, hook, n, now) {
  const started = performance.now();
  await db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts,
                                     give_up_reason, next_attempt_at, created_at, updated_at, finished_at)
     SELECT md5('bench-recover-' || i), $1, $2, $3, 'conversation.ended', t,
            jsonb_build_object('conversation_id', md5('bench-recover-conversation-' || i)),
            'given_up', 1, 0, 'webhook_switched_off', NULL, t, t, t
       FROM generate_series(1, $4::int) AS i
      CROSS JOIN LATERAL (SELECT $5::timestamptz - interval '1 hour' + (i - 1) * (interval '1 hour' / $4::int) AS t) AS at`,
    [hook.id, hook.organisationId, hook.connectionId, n, now.toISOString()],
  );
  await db.query(`VACUUM ANALYZE webhook_deliveries`);
  return round2((performance.now() - started) / 1000);
}

async function main() {
  const dist = h.distFrom();
  h.requireBuilds([dist], ['api', 'worker', 'admin']);
  const load = h.loadBefore(say);
  const tls = await h.ensureCert(work, SETTINGS.receiver_host);
  await h.recreateDatabase(SETTINGS.database_url);
  const { organisationId, connectionId, key } = h.makeTenant((args) => h.admin(args, { dist, env: env() }), {
    org: `recover bench ${new Date().toISOString()}`,
  });
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const secret = `whsec_${randomBytes(32).toString('base64url')}`;
  const [{ id: hookId }] = (
    await db.query(`INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, $3, '{conversation.ended}', $4) RETURNING id`, [
      organisationId,
      connectionId,
      `https://${SETTINGS.receiver_host}/bench-recover`,
      secret,
    ])
  ).rows;
  const now = new Date();
  const since = new Date(now.getTime() - 3600_000);
  const seedS = await seed(db, { id: hookId, organisationId, connectionId }, SETTINGS.deliveries, now);
  say(`${SETTINGS.deliveries} given-up deliveries seeded in ${seedS} s`);

  const receiver = await h.startReceiver(tls, { host: SETTINGS.receiver_host, retryForMs: 600_000 });
  const appEnv = env({ ...tls, NODE_EXTRA_CA_CERTS: tls.TLS_CERT_FILE, WEBHOOK_ALLOWED_PRIVATE_CIDRS: `${SETTINGS.receiver_host}/32`, METRICS_PORT: '0' });
  const healthPort = await h.freePort();
  const profile = process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROFILE)] : [];
  const worker = h.start('worker', [...profile, h.entry(dist, 'worker')], { ...appEnv, WORKER_HEALTH_PORT: String(healthPort) }, { dropStdout: true });
  const api = await h.startApi('api', { dist, env: appEnv, dropStdout: true });
  try {
    await h.waitWorkerReady(worker, healthPort);
    await sleep(1000);
    await receiver.reset();
    const parts = { api: api.proc.pid, worker: worker.pid, receiver: receiver.proc.pid, bench: 'self' };
    // Postgres: the backends of this database only (the server is shared with whatever else runs here).
    const backends = async () =>
      new Set((await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).rows.map((r) => String(r.pid)));
    const cpuBefore = h.machineCpu(parts, { postgresPids: await backends() });
    const loadAtStart = h.loadAverage();
    const t0 = Date.now();
    const calls = [];
    for (let more = true; more;) {
      const res = await h.request({
        port: api.port,
        method: 'POST',
        path: `/v1/webhooks/${hookId}/recover`,
        headers: { authorization: `Bearer ${key}`, 'idempotency-key': randomUUID() },
        json: { since: since.toISOString() },
      });
      const body = JSON.parse(res.body.toString('utf8'));
      if (res.status !== 202) throw new Error(`recover answered ${res.status}: ${res.body}`);
      calls.push({ at_ms: Date.now() - t0, answer_ms: round2(res.ms), ...body.data });
      more = body.data.more;
    }
    const sent = calls.reduce((sum, c) => sum + c.sent, 0);
    say(`${calls.length} calls in ${calls.at(-1).at_ms} ms took ${sent} deliveries`);
    const got = await h.waitReceived(receiver, SETTINGS.deliveries, 600_000);
    const seconds = (Date.now() - t0) / 1000;
    // Every recorded as delivered (the last attempts' records follow their receipts by milliseconds).
    for (const until = Date.now() + 60_000; ; await sleep(100)) {
      const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [hookId])).rows;
      if (n >= SETTINGS.deliveries) break;
      if (Date.now() > until) throw new Error(`${n} of ${SETTINGS.deliveries} recorded as delivered`);
    }
    const cpu = h.cpuPerItem(cpuBefore, h.machineCpu(parts, { postgresPids: await backends() }), SETTINGS.deliveries, (Date.now() - t0) / 1000);
    await sleep(SETTINGS.settle_s * 1000);
    const after = await receiver.stats();
    const [log] = (
      await db.query(
        `SELECT count(*) FILTER (WHERE d.state = 'delivered' AND d.series = 2)::int AS delivered_in_new_series,
                (SELECT count(*)::int FROM webhook_delivery_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id WHERE x.webhook_id = $1) AS attempts,
                (SELECT count(*)::int FROM (SELECT 1 FROM webhook_delivery_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id
                                             WHERE x.webhook_id = $1 GROUP BY a.delivery_id HAVING count(*) > 1) twice) AS with_two_attempts
           FROM webhook_deliveries d WHERE d.webhook_id = $1`,
        [hookId],
      )
    ).rows;
    const checks = {
      sent_by_calls: sent,
      received: after.count,
      unique_ids: after.unique,
      sent_twice: after.count - after.unique,
      delivered_in_new_series: log.delivered_in_new_series,
      attempts_logged: log.attempts,
      deliveries_with_two_attempts: log.with_two_attempts,
    };
    const ok =
      sent === SETTINGS.deliveries &&
      after.count === SETTINGS.deliveries &&
      after.unique === SETTINGS.deliveries &&
      log.delivered_in_new_series === SETTINGS.deliveries &&
      log.attempts === SETTINGS.deliveries &&
      log.with_two_attempts === 0;
    if (!ok) throw new Error(`the checks failed: ${JSON.stringify(checks)}`);
    const report = {
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      dist,
      machine: { ...h.machine(), load_average_1m_before: load, load_average_1m_at_first_call: loadAtStart, load_average_1m_after: h.loadAverage() },
      settings: { ...SETTINGS, database_url: undefined, seed_s: seedS },
      calls,
      result: {
        calls: calls.length,
        calls_done_s: round2(calls.at(-1).at_ms / 1000),
        first_answer_ms: calls[0].answer_ms,
        answer_ms: { median: h.median(calls.map((c) => c.answer_ms)), max: Math.max(...calls.map((c) => c.answer_ms)) },
        first_delivery_ms: got.first - t0,
        all_delivered_s: round2((got.last - t0) / 1000),
        recorded_s: round2(seconds),
        per_second: Math.round(SETTINGS.deliveries / ((got.last - got.first) / 1000)),
        machine_cpu_ms: cpu,
      },
      checks,
      within_bound: (got.last - t0) / 1000 <= SETTINGS.within_s,
    };
    process.stdout.write(`\n${writeReport('webhooks-recover', report)}\n`);
  } finally {
    await h.stop(api.proc);
    await h.stop(worker, 30_000);
    await h.stop(receiver.proc);
    await db.end();
  }
}

h.runMain(main, { tag: 'recover', giveUpMinutes: 20, exit: true });
