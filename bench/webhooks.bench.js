#!/usr/bin/env node
// Webhook deliveries through the whole path (outbox → relay → BullMQ → signed POST, every attempt
// logged in Postgres) to a local HTTPS receiver (bench/receiver.js on 127.0.0.1:443, so it needs
// root), beside a bare undici loop posting the same signed bodies to the same receiver in the same
// round; then event-to-receipt latency at a steady rate of events. Per delivery it also counts, in
// the worker's process (bench/webhooks-count.js, preloaded), the SQL statements and Redis commands
// sent, and reads the CPU every process used (/proc). It compiles the sources into
// .data/bench/webhooks-dist first. Earlier builds (BENCH_BASELINE_DIST, BENCH_BUILDS) run beside
// them in the same run, the order rotated each round; each round measures the bare loop first.
// Its pieces (a bench site, one worker's run) are what compare-builds.js --webhooks runs too.
//   node bench/webhooks.bench.js
'use strict';
const { createHmac, randomBytes } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const { Agent, request } = require('undici');
const h = require('./harness');
const { writeReport } = require('./markdown');

const { median, round2, sleep, spread } = h;
const work = h.workDir('bench');
const distDir = path.join(work, 'webhooks-dist');
const SETTINGS = {
  deliveries: Number(process.env.BENCH_DELIVERIES || 20_000),
  warmup: Number(process.env.BENCH_WARMUP_DELIVERIES || 2_000),
  /** POSTs the bare loop keeps in flight, and (unless BENCH_WORKER_CONCURRENCY says otherwise) the worker's WEBHOOK_CONCURRENCY. */
  concurrency: Number(process.env.BENCH_CONCURRENCY || 50),
  worker_concurrency: Number(process.env.BENCH_WORKER_CONCURRENCY || process.env.BENCH_CONCURRENCY || 50),
  /** Event-to-receipt: the first rate is the target's; the others (the earlier 200/s) are extra lines. */
  rates_per_s: [Number(process.env.BENCH_RATE || 500), ...(process.env.BENCH_EXTRA_RATES ?? '200').split(',').filter(Boolean).map(Number)],
  rate_seconds: Number(process.env.BENCH_RATE_SECONDS || 10),
  rounds: Number(process.env.BENCH_ROUNDS || (process.env.BENCH_BASELINE_DIST || process.env.BENCH_BUILDS ? 3 : 1)),
  /** Earlier builds run beside these sources: BENCH_BUILDS="name=dist,…" (in order), or BENCH_BASELINE_DIST=<dist> for one named "old". */
  other_builds: (process.env.BENCH_BUILDS || (process.env.BENCH_BASELINE_DIST ? `old=${process.env.BENCH_BASELINE_DIST}` : ''))
    .split(',')
    .filter(Boolean)
    .map((pair) => ({ name: pair.slice(0, pair.indexOf('=')), dist: path.resolve(pair.slice(pair.indexOf('=') + 1)) })),
  /**
   * WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK for the worker. The bench has one webhook, and the bare loop keeps
   * `concurrency` POSTs in flight to it, so by default the cap is raised to that (the product's default
   * is 10, which holds one webhook to 10 attempts at once); BENCH_MAX_IN_FLIGHT=10 measures the default.
   */
  max_in_flight_per_webhook: Number(process.env.BENCH_MAX_IN_FLIGHT || process.env.BENCH_CONCURRENCY || 50),
  worker_node_env: 'production',
  worker_log_level: 'warn',
  worker_db_pool: Number(process.env.BENCH_DB_POOL || 20),
  database_url: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/integrations_bench_webhooks',
  redis_url: h.redisUrl(),
  redis_prefix: 'iabenchwh',
};
const TARGET = { min_ratio_to_bare: 0.5, max_p99_ms: 50 };
const SECRET = `whsec_${randomBytes(32).toString('base64url')}`;

const say = h.sayer('bench');
const sign = (t, body) => `t=${t},v1=${createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex')}`;
const env = (extra = {}) =>
  h.appEnv({ ...SETTINGS, node_env: SETTINGS.worker_node_env, log_level: SETTINGS.worker_log_level }, { dataDir: work }, { BENCH_DIST: distDir, ...extra });

/**
 * Where one build's workers deliver: a database of its own (`databaseUrl`, recreated and migrated by
 * `dist`'s admin CLI, so that a build runs on its own schema), a Redis prefix, one organisation with
 * one connection and one webhook posting to `https://<receiverHost>/bench-worker`. Answers
 * {databaseUrl, redisPrefix, db (a connected pg Client), organisationId, hookId, applied, env, close()}.
 */
async function makeSite({ dist, databaseUrl = SETTINGS.database_url, redisPrefix = SETTINGS.redis_prefix, receiverHost = '127.0.0.1', org }) {
  fs.mkdirSync(work, { recursive: true });
  await h.recreateDatabase(databaseUrl);
  const siteEnv = (extra = {}) => env({ DATABASE_URL: databaseUrl, REDIS_PREFIX: redisPrefix, ...extra });
  const { applied, organisationId, connectionId } = h.makeTenant((args) => h.admin(args, { dist, env: siteEnv() }), { org, key: false });
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const [hook] = (
    await db.query(`INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, $3, '{conversation.ended}', $4) RETURNING id`, [
      organisationId,
      connectionId,
      `https://${receiverHost}/bench-worker`,
      SECRET,
    ])
  ).rows;
  const close = async () => {
    await db.query(
      `UPDATE webhook_deliveries SET state = 'given_up', give_up_reason = 'webhook_removed', finished_at = now(), next_attempt_at = NULL WHERE webhook_id = $1 AND state IN ('queued', 'waiting')`,
      [hook.id],
    );
    await db.query(`UPDATE webhooks SET deleted_at = now(), secret = '' WHERE id = $1`, [hook.id]);
    await db.end();
  };
  return { databaseUrl, redisPrefix, db, organisationId, hookId: hook.id, applied, env: siteEnv, close };
}

/** The reference: one undici Agent (keep-alive), `concurrency` loops posting signed bodies of the delivery shape. */
async function bareLoop(tls, count, receiverHost = '127.0.0.1') {
  const agent = new Agent({ connect: { ca: fs.readFileSync(tls.TLS_CERT_FILE), rejectUnauthorized: true } });
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
      const res = await request(`https://${receiverHost}/bench-bare`, {
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

/** The preload's counts now: SIGUSR2 to the worker, then its file once it has written a newer one. */
async function readCounts(proc, file) {
  const seqOf = () => {
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return { seq: 0 };
    }
  };
  const before = seqOf().seq;
  proc.kill('SIGUSR2');
  for (const until = Date.now() + 10_000; Date.now() < until; await sleep(10)) {
    const now = seqOf();
    if (now.seq > before) return now;
  }
  throw new Error('the worker wrote no counts (is bench/webhooks-count.js preloaded?)');
}

/** `b - a` per delivery, by label (labels under 0.005 per delivery left out), and the total. */
function perDelivery(a, b, n) {
  const by = {};
  for (const [k, v] of Object.entries(b.by)) {
    const d = (v - (a.by[k] ?? 0)) / n;
    if (d >= 0.005) by[k] = round2(d);
  }
  return { total: round2((b.total - a.total) / n), by: Object.fromEntries(Object.entries(by).sort((x, y) => y[1] - x[1])) };
}

/** The Redis server's `calls` per command (INFO commandstats): the whole server, every client's. */
async function serverCalls(redis) {
  const text = await redis.info('commandstats');
  let total = 0;
  for (const m of text.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(m[1]);
  return total;
}

/**
 * One worker (of `build`, on `site`) from start to stop: warm-up, the throughput phase (timed until the
 * receiver has every delivery; counted until Postgres has every one delivered), then event-to-receipt
 * at each of `rates` (events/s). `receiverHost` is the address the worker may reach (its allow-list);
 * `deliveries` and `warmup` the events of the throughput phase and of the warm-up; `maxInFlight` the
 * worker's WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK.
 */
async function runWorker({
  build,
  site,
  round,
  tls,
  redis,
  receiver,
  rates = SETTINGS.rates_per_s,
  receiverHost = '127.0.0.1',
  deliveries = SETTINGS.deliveries,
  warmup = SETTINGS.warmup,
  maxInFlight = SETTINGS.max_in_flight_per_webhook,
}) {
  const { db, organisationId, hookId } = site;
  const countFile = path.join(work, `webhooks-counts-${process.pid}.json`);
  fs.rmSync(countFile, { force: true });
  // What autovacuum would have done since the last run, where the server runs with it off: without it each
  // round inherits the dead rows of the ones before (every relayed event and delivered delivery is an
  // updated row) and runs slower than the last, whatever the build.
  for (const table of ['outbox_events', 'webhook_deliveries', 'webhook_delivery_attempts']) await db.query(`VACUUM ANALYZE ${table}`);
  const load = h.loadAverage();
  const healthPort = await h.freePort();
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS || '').split(' ').filter(Boolean);
  const worker = h.start(
    `worker ${build.name}`,
    [...nodeArgs, '--require', path.join(__dirname, 'webhooks-count.js'), path.join(__dirname, 'app.js'), 'worker'],
    site.env({
      BENCH_DIST: build.dist,
      BENCH_COUNT_FILE: countFile,
      WORKER_HEALTH_PORT: String(healthPort),
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: `${receiverHost}/32`,
      WEBHOOK_CONCURRENCY: String(SETTINGS.worker_concurrency),
      DATABASE_POOL_SIZE: String(SETTINGS.worker_db_pool),
      NODE_EXTRA_CA_CERTS: tls.TLS_CERT_FILE,
      WEBHOOK_MAX_IN_FLIGHT_PER_WEBHOOK: String(maxInFlight),
    }),
  );
  const delivered = async () =>
    (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1 AND state = 'delivered'`, [hookId])).rows[0].n;
  const waitDelivered = async (n, timeoutMs) => {
    for (const until = Date.now() + timeoutMs; ; await sleep(20)) {
      const got = await delivered();
      if (got >= n) return got;
      if (Date.now() > until) throw new Error(`${got} of ${n} deliveries recorded as delivered within ${timeoutMs} ms`);
    }
  };
  const emit = (n) =>
    db.query(
      `INSERT INTO outbox_events (organisation_id, event, data)
       SELECT $1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)) FROM generate_series(1, $2::int)`,
      [organisationId, n],
    );
  try {
    await h.waitWorkerReady(worker, healthPort);
    say(`round ${round}, ${build.name}: ${warmup} warm-up deliveries (load ${load})…`);
    const d0 = await delivered();
    await receiver.reset();
    await emit(warmup);
    await h.waitReceived(receiver, warmup, 120_000);
    await waitDelivered(d0 + warmup, 60_000);

    say(`round ${round}, ${build.name}: ${deliveries} events at once…`);
    await receiver.reset();
    const countsBefore = await readCounts(worker, countFile);
    const serverBefore = await serverCalls(redis);
    const cpuParts = { worker: worker.pid, receiver: receiver.proc.pid, bench: 'self' };
    const cpuBefore = h.machineCpu(cpuParts);
    const ownBefore = h.machineCpu(cpuParts, { postgresPids: await backends(db), redis: false });
    const started = performance.now();
    await emit(deliveries);
    const got = await h.waitReceived(receiver, deliveries, 600_000);
    const seconds = (performance.now() - started) / 1000;
    await waitDelivered(d0 + warmup + deliveries, 120_000);
    // The machine's CPU from the events' insert to the last attempt recorded, by process (the bench's part: the insert, and polling the receiver and Postgres).
    const machineCpuMs = h.cpuPerItem(cpuBefore, h.machineCpu(cpuParts), deliveries, (performance.now() - started) / 1000);
    // The same without the work of others on the shared servers: only this database's backends, no Redis.
    const ownCpuMs = h.cpuPerItem(
      ownBefore,
      h.machineCpu(cpuParts, { postgresPids: await backends(db), redis: false }),
      deliveries,
      (performance.now() - started) / 1000,
    );
    const countsAfter = await readCounts(worker, countFile);
    const serverAfter = await serverCalls(redis);
    const n = deliveries;
    const throughput = { deliveries: n, seconds: round2(seconds), per_second: Math.round(n / seconds), unique_ids: got.unique };
    const counts = {
      sql_statements: perDelivery(countsBefore.pg, countsAfter.pg, n),
      redis_commands: perDelivery(countsBefore.redis, countsAfter.redis, n),
      redis_server_calls_all_clients: round2((serverAfter - serverBefore) / n),
      /** The worker process's own CPU time (user + system), which the machine's load moves far less than the rates. */
      worker_cpu_ms: round2((countsAfter.cpu_us - countsBefore.cpu_us) / 1000 / n),
    };
    say(
      `round ${round}, ${build.name}: ${throughput.per_second}/s; per delivery ${counts.sql_statements.total} SQL statements, ${counts.redis_commands.total} Redis commands, ${counts.worker_cpu_ms} ms of worker CPU, ${machineCpuMs.total} ms of the machine's (${machineCpuMs.cores_busy} cores busy)`,
    );

    const latency = [];
    for (const rate of rates) {
      const events = rate * SETTINGS.rate_seconds;
      await sleep(1000);
      await receiver.reset();
      const emitSeconds = await h.atRate(events, rate, () =>
        db.query(
          `INSERT INTO outbox_events (organisation_id, event, data) VALUES ($1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)))`,
          [organisationId],
        ),
      );
      await h.waitReceived(receiver, events, 120_000);
      const lat = (await receiver.latencies()).map(([, ms]) => ms).sort((a, b) => a - b);
      latency.push({
        rate_per_s: rate,
        events,
        emitted_in_s: round2(emitSeconds),
        p50_ms: h.quantile(lat, 0.5),
        p99_ms: h.quantile(lat, 0.99),
        max_ms: lat[lat.length - 1],
      });
      say(`round ${round}, ${build.name}: ${rate}/s → p50 ${latency.at(-1).p50_ms} ms, p99 ${latency.at(-1).p99_ms} ms`);
    }
    return {
      build: build.name,
      round,
      load_average_1m_before: load,
      throughput,
      counts,
      machine_cpu_ms: machineCpuMs,
      own_cpu_ms: ownCpuMs,
      latency,
      emitted: warmup + n + latency.reduce((a, l) => a + l.events, 0),
    };
  } finally {
    await h.stop(worker, 30_000); // the worker drains for up to 25 s
    fs.rmSync(countFile, { force: true });
  }
}

/** The pids (as strings) of the Postgres backends connected to `db`'s database now. */
const backends = async (db) => new Set((await db.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)).rows.map((r) => String(r.pid)));

/** Says when the server runs without autovacuum (each worker run then vacuums the tables it writes first). */
async function sayAutovacuum(db) {
  const autovacuum = (await db.query(`SHOW autovacuum`)).rows[0].autovacuum;
  if (autovacuum !== 'on') say(`the server's autovacuum is ${autovacuum}: the bench vacuums its tables before each worker run instead`);
}

/** What `site`'s log holds for its webhook (deliveries delivered, attempts), with a warning unless each of `expected` events has one of each. */
async function logged(site, expected) {
  const [counts] = (
    await site.db.query(
      `SELECT count(*) FILTER (WHERE d.state = 'delivered')::int AS delivered,
              (SELECT count(*)::int FROM webhook_delivery_attempts a JOIN webhook_deliveries x ON x.id = a.delivery_id WHERE x.webhook_id = $1) AS attempts
         FROM webhook_deliveries d WHERE d.webhook_id = $1`,
      [site.hookId],
    )
  ).rows;
  if (counts.delivered !== expected || counts.attempts !== expected)
    say(`warning: ${counts.delivered} delivered and ${counts.attempts} attempts for ${expected} events`);
  return counts;
}

/** Each build's median and range over its rounds; counts from its median-throughput round. */
function summarise(runs, builds) {
  return builds.map((b) => {
    const mine = runs.filter((x) => x.build === b.name);
    const ratios = mine.map((x) => x.ratio);
    const p99 = mine.map((x) => x.latency[0].p99_ms);
    const byThroughput = [...mine].sort((x, y) => x.throughput.per_second - y.throughput.per_second);
    const mid = byThroughput[Math.floor((byThroughput.length - 1) / 2)];
    const ratio = median(ratios);
    const p99m = median(p99);
    return {
      build: b.name,
      rounds: mine.length,
      worker_per_second: { median: median(mine.map((x) => x.throughput.per_second)), range: spread(mine.map((x) => x.throughput.per_second)) },
      ratio: { median: round2(ratio * 1000) / 1000, range_pct: `${Math.round(Math.min(...ratios) * 100)}–${Math.round(Math.max(...ratios) * 100)}%` },
      p50_ms: { median: median(mine.map((x) => x.latency[0].p50_ms)) },
      p99_ms: { median: p99m, range: spread(p99) },
      extra_p99_ms: SETTINGS.rates_per_s
        .slice(1)
        .map((_, i) => ({ median: median(mine.map((x) => x.latency[i + 1].p99_ms)), range: spread(mine.map((x) => x.latency[i + 1].p99_ms)) })),
      worker_cpu_ms: { median: median(mine.map((x) => x.counts.worker_cpu_ms)), range: spread(mine.map((x) => x.counts.worker_cpu_ms)) },
      counts: mid.counts,
      machine_cpu_ms: mid.machine_cpu_ms ? { worker: mid.machine_cpu_ms, bare: mid.bare_machine_cpu_ms } : undefined,
      cost_ratio: mine.every((x) => x.cost_ratio)
        ? {
            median: median(mine.map((x) => x.cost_ratio)),
            range_pct: `${Math.round(Math.min(...mine.map((x) => x.cost_ratio)) * 100)}–${Math.round(Math.max(...mine.map((x) => x.cost_ratio)) * 100)}%`,
          }
        : undefined,
      target_met: { ratio: ratio >= TARGET.min_ratio_to_bare, p99: p99m < TARGET.max_p99_ms },
    };
  });
}

async function main() {
  say(`compiling the sources into ${path.relative(h.root, distDir)}…`);
  h.buildInto(distDir);
  const builds = [];
  for (const b of SETTINGS.other_builds) {
    h.requireBuilds([b.dist], ['WorkerModule']);
    const commit = h.gitCommit(path.dirname(b.dist), { headOnly: true }); // null for a build outside a checkout: its name says what it is
    builds.push({ ...b, description: `${b.dist}${commit ? `, commit ${commit}` : ''}` });
  }
  builds.push({
    name: builds.length ? process.env.BENCH_NAME || 'new' : 'current',
    dist: distDir,
    description: `these sources, commit ${h.gitCommit() ?? '?'}`,
  });
  const load = h.loadBefore(say);
  const tls = await h.ensureCert(work);

  // A database of its own, new each run: the rounds then measure the build, not what earlier runs left.
  const site = await makeSite({ dist: distDir, org: `webhook bench ${new Date().toISOString()}` });
  const { db } = site;
  say(`migrated ${SETTINGS.database_url}${site.applied.length ? ` (applied ${site.applied.join(', ')})` : ''}`);
  await sayAutovacuum(db);
  const Redis = require('ioredis');
  const redis = new Redis(SETTINGS.redis_url, { lazyConnect: false, maxRetriesPerRequest: 1 });

  const receiver = await h.startReceiver(tls);
  const runs = [];
  try {
    say(`bare undici loop: ${SETTINGS.warmup} warm-up…`);
    await bareLoop(tls, SETTINGS.warmup);
    for (let round = 1; round <= SETTINGS.rounds; round++) {
      await receiver.reset();
      const parts = { bench: 'self', receiver: receiver.proc.pid };
      const cpuBefore = h.machineCpu(parts);
      const bare = await bareLoop(tls, SETTINGS.deliveries);
      bare.machine_cpu_ms = h.cpuPerItem(cpuBefore, h.machineCpu(parts), SETTINGS.deliveries, bare.seconds);
      say(`round ${round}: bare undici loop ${bare.per_second}/s; machine CPU ${bare.machine_cpu_ms.total} ms per POST`);
      for (const build of h.rotated(builds, round - 1)) {
        const run = await runWorker({ build, site, round, tls, redis, receiver });
        runs.push({
          ...run,
          bare_per_second: bare.per_second,
          bare_machine_cpu_ms: bare.machine_cpu_ms,
          ratio: Number((run.throughput.per_second / bare.per_second).toFixed(3)),
          cost_ratio: Number((bare.machine_cpu_ms.total / run.machine_cpu_ms.total).toFixed(3)),
        });
      }
    }

    await sleep(1000);
    const expected = runs.reduce((a, x) => a + x.emitted, 0);
    const counts = await logged(site, expected);
    const summary = summarise(runs, builds);
    const report = {
      date: new Date().toISOString(),
      commit: h.gitCommit(),
      machine: { cpus: h.machine().cpus, cpu_model: h.machine().cpu_model ?? '?', node: process.version, load_average_1m_before: load },
      settings: SETTINGS,
      builds: builds.map(({ name, description }) => ({ name, description })),
      runs,
      summary,
      checks: { expected, delivered: counts.delivered, attempts_logged: counts.attempts },
      targets: TARGET,
    };
    process.stdout.write(`\n${writeReport('webhooks', report)}\n`);
  } finally {
    await h.stop(receiver.proc);
    await site.close();
    redis.disconnect();
  }
}

module.exports = { SETTINGS, bareLoop, logged, makeSite, runWorker, sayAutovacuum, work };

if (require.main === module) h.runMain(main, { tag: 'bench', giveUpMinutes: null, exit: true });
