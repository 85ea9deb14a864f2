#!/usr/bin/env node
// The Integrations section's Deliveries page of a webhook with 1,000 and of one with 1,000,000 logged
// deliveries: the first page, a deep page (a cursor 90% of the way down the log) and two filtered
// first pages, against the built api (`npm run build` first) over HTTPS keep-alive, both webhooks'
// pages interleaved so that the machine's drift weighs on both alike. Two ways of loading them:
//  - paced (the headline, and the reading of "20 concurrent sessions" the p99 target is held to):
//    20 signed-in sessions used as people use the console, each loading a page, then reading it for
//    a think time (1 s, ±50% uniform jitter) before the next: about 20 pages/s offered;
//  - closed loop (the capacity figure): the same 20 sessions each sending its next request the moment
//    the last answer arrives, so 20 requests are always in flight and the machine is saturated; its
//    pages/s is what the machine can serve, its latencies mostly queueing.
// Also one session alone, and the small log before the large one exists. Loopback only; a dedicated
// database it drops and recreates; it stops by itself and kills its children on the way out. See
// bench/README.md.
'use strict';
const lib = require('./lib');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('pg');

const { root, withDb, sleep } = lib;
const work = path.join(root, '.data', 'bench-console');
/** The build to run (default dist/); BENCH_DIST points at a copy when dist/ is being rebuilt meanwhile. */
const distDir = path.resolve(root, process.env.BENCH_DIST || 'dist');
const HOST = '127.0.0.1';
const DB_NAME = 'integrations_bench_console';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const SETTINGS = {
  sizes: (process.env.BENCH_CONSOLE_SIZES || '1000,1000000').split(',').map(Number),
  sessions: Number(process.env.BENCH_CONSOLE_SESSIONS || 20),
  rounds: Number(process.env.BENCH_CONSOLE_ROUNDS || 40),
  warmup_rounds: Number(process.env.BENCH_CONSOLE_WARMUP || 10),
  page_size: 25,
  deep_fraction: 0.9,
  keep_alive: true,
  api_node_env: 'production',
  api_log_level: 'warn',
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchconsole',
  /** Paced mode: each session's pause between pages, uniform in think_ms × (1 ± think_jitter). */
  think_ms: Number(process.env.BENCH_CONSOLE_THINK_MS || 1000),
  think_jitter: 0.5,
  paced_warmup_s: Number(process.env.BENCH_CONSOLE_PACED_WARMUP_S || 10),
  paced_s: Number(process.env.BENCH_CONSOLE_PACED_S || 60),
  quiet_load: Number(process.env.BENCH_CONSOLE_QUIET_LOAD || 1.5),
  quiet_wait_s: Number(process.env.BENCH_CONSOLE_QUIET_WAIT || 180),
};
const TARGET_RATIO = 1.5;
const TARGET_P99_MS = 50;
const PAGES = ['first', 'deep', 'failed, first', 'user.joined, first'];
const say = (msg) => process.stdout.write(`[bench:console] ${msg}\n`);

function env(extra = {}) {
  return {
    ...process.env,
    NODE_ENV: SETTINGS.api_node_env,
    LOG_LEVEL: SETTINGS.api_log_level,
    HOST,
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    DATA_DIR: work,
    ...extra,
  };
}

/**
 * Grows the webhook's log to `total` deliveries (numbers `from`..`total`), each with its attempt:
 * delivery i was made i seconds before a fixed instant, so added rows are older and the first page
 * is the same rows at every size. One in 20 failed, one in 50 given up, the rest delivered; the
 * four events in turn.
 */
async function grow(db, hook, from, total) {
  const started = Date.now();
  await db.query(`SET synchronous_commit = off`);
  await db.query(
    `INSERT INTO webhook_deliveries (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, state, series, attempts,
                                     give_up_reason, next_attempt_at, created_at, updated_at, finished_at)
     SELECT md5('bench-delivery-' || $1::bigint || '-' || i), $1, $2, $3,
            (ARRAY['conversation.ended', 'summary.ready', 'document.translated', 'user.joined'])[1 + i % 4],
            t, jsonb_build_object('conversation_id', md5('bench-conversation-' || i)),
            s.state, 1, CASE s.state WHEN 'failed' THEN 8 WHEN 'given_up' THEN 0 ELSE 1 END,
            CASE s.state WHEN 'given_up' THEN 'webhook_switched_off' END, NULL, t, t, t
       FROM generate_series($4::int, $5::int) AS i
      CROSS JOIN LATERAL (SELECT '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' AS t) AS at
      CROSS JOIN LATERAL (SELECT CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 50 = 1 THEN 'given_up' ELSE 'delivered' END AS state) AS s`,
    [hook.id, hook.organisationId, hook.connectionId, from, total],
  );
  await db.query(
    `INSERT INTO webhook_delivery_attempts (delivery_id, series, number, attempted_at, succeeded, status, duration_ms, error)
     SELECT md5('bench-delivery-' || $3::bigint || '-' || i), 1, 1, '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' + interval '40 milliseconds',
            i % 20 <> 0, CASE WHEN i % 20 = 0 THEN 503 ELSE 200 END, 40 + i % 60, CASE WHEN i % 20 = 0 THEN 'answered 503' END
       FROM generate_series($1::int, $2::int) AS i
      WHERE NOT (i % 20 <> 0 AND i % 50 = 1)`,
    [from, total, hook.id],
  );
  await db.query(`VACUUM ANALYZE webhook_deliveries`);
  await db.query(`VACUUM ANALYZE webhook_delivery_attempts`);
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id]);
  return { deliveries: rows[0].n, insert_s: +((Date.now() - started) / 1000).toFixed(1) };
}

/** A cursor as the api issues it (signed with the installation's cursor secret), after the first `rowsBefore` rows of the log. */
async function cursorAfter(db, hook, rowsBefore) {
  const { encodeCursor, CURSOR_SECRET_NAME } = require(path.join(distDir, 'libs/core/src'));
  const [{ secret }] = (await db.query(`SELECT secret FROM server_secrets WHERE name = $1`, [CURSOR_SECRET_NAME])).rows;
  const { rows } = await db.query(`SELECT created_at, id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`, [
    hook.id,
    rowsBefore - 1,
  ]);
  return encodeCursor({ createdAt: new Date(rows[0].created_at), id: rows[0].id.trim() }, secret);
}

/** The plan and server time of the deep page's query, written as paginateRows writes it. */
async function explainDeep(db, hook, rowsBefore) {
  const { rows: at } = await db.query(
    `SELECT created_at, id FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [hook.id, rowsBefore - 1],
  );
  const { rows } = await db.query(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM webhook_deliveries WHERE webhook_id = $1
       AND (created_at, id) < ($2::timestamptz, $3::char(32)) ORDER BY created_at DESC, id DESC LIMIT ${SETTINGS.page_size + 1}`,
    [hook.id, at[0].created_at, at[0].id],
  );
  const plan = rows[0]['QUERY PLAN'][0];
  const scan = (node) => (node['Index Cond'] || node.Filter || !node.Plans ? node : scan(node.Plans[0]));
  const s = scan(plan.Plan);
  return {
    execution_ms: plan['Execution Time'],
    node: s['Node Type'],
    index: s['Index Name'] ?? null,
    rows_removed_by_filter: s['Rows Removed by Filter'] ?? 0,
  };
}

const cookieOf = (res, name) => {
  const set = [].concat(res.headers['set-cookie'] ?? []);
  const line = set.find((c) => c.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1).split(';')[0] : null;
};

/** An HTTPS request that also answers the headers (lib.request keeps only status and body). */
function call(port, { method = 'GET', path: p, headers = {}, form, agent }) {
  const https = require('node:https');
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const body = form ? Buffer.from(new URLSearchParams(form).toString()) : undefined;
    const req = https.request(
      {
        host: HOST,
        port,
        method,
        path: p,
        agent: agent ?? false, // a fresh connection unless the caller keeps one: no race with the server closing an idle one
        rejectUnauthorized: false,
        timeout: 10000,
        headers: body ? { ...headers, 'content-type': 'application/x-www-form-urlencoded', 'content-length': body.length } : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            ms: Number(process.hrtime.bigint() - t0) / 1e6,
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on ${method} ${p}`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Signs a session in the way the platform hands a person over: `admin console link`, the link page, its button. */
async function signIn(port, admin, personId) {
  const { url } = admin(['console', 'link', '--person', personId]);
  const link = new URL(url);
  const page = await call(port, { path: `${link.pathname}${link.search}` });
  if (page.status !== 200) throw new Error(`the sign-in link answered ${page.status}`);
  const pre = cookieOf(page, '__Host-ia-console-pre');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  const done = await call(port, {
    method: 'POST',
    path: '/console/sign-in/link',
    headers: { cookie: `__Host-ia-console-pre=${pre}`, origin: `https://${HOST}:${port}` },
    form: { token: link.searchParams.get('token'), _csrf: csrf },
  });
  const session = cookieOf(done, '__Host-ia-console');
  if (done.status !== 303 || !session) throw new Error(`signing in answered ${done.status}: ${done.body.slice(0, 300)}`);
  return `__Host-ia-console=${session}`;
}

/** A page must be a full page of the log with its Older link: anything else makes the numbers meaningless. */
function check(url, res) {
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}: ${res.body.slice(0, 300)}`);
  const rows = (res.body.match(/<tr>/g) ?? []).length - 1;
  if (rows !== SETTINGS.page_size || !res.body.includes('rel="next"')) throw new Error(`GET ${url} did not answer a full page (${rows} rows)`);
}

/**
 * Each of `cookies` (a session) on its own keep-alive connection calls every target in turn, in a
 * rotating order, for the warm-up rounds (discarded) and then `rounds` measured rounds; the targets
 * are interleaved, so a change of load on the machine weighs on every one alike.
 */
async function measurePhase(port, cookies, targets, rounds = SETTINGS.rounds, warmup = SETTINGS.warmup_rounds) {
  const times = targets.map(() => []);
  const started = Date.now();
  let requests = 0;
  await Promise.all(
    cookies.map(async (cookie, i) => {
      const agent = lib.keepAliveAgent(1);
      const order = targets.map((_, k) => (k + i) % targets.length);
      try {
        for (let round = 0; round < warmup + rounds; round++) {
          for (const k of order) {
            const res = await call(port, { path: targets[k].url, headers: { cookie }, agent });
            check(targets[k].url, res);
            if (round >= warmup) {
              times[k].push(res.ms);
              requests++;
            }
          }
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  return {
    sessions: cookies.length,
    pages_per_s: Math.round((requests * (warmup + rounds)) / rounds / seconds),
    results: targets.map((t, k) => ({ log: t.log, page: t.page, ...lib.summariseMs(times[k]), requests: times[k].length })),
  };
}

/**
 * Paced: each of `cookies` (a session, on its own keep-alive connection) loads the targets in turn
 * (rotating order), pausing a think time after each answer, as a person reads a page before the
 * next click; the sessions start staggered over one think time. Pages answered in the first
 * `warmupS` seconds are discarded, then every page answered in the next `seconds` is measured.
 * The offered load is about sessions ÷ (think time + latency) pages/s, far under the capacity, so
 * what it measures is the latency a person gets while 19 others use the console too.
 */
async function measurePaced(port, cookies, targets, seconds = SETTINGS.paced_s, warmupS = SETTINGS.paced_warmup_s) {
  const times = targets.map(() => []);
  const think = () => SETTINGS.think_ms * (1 - SETTINGS.think_jitter + 2 * SETTINGS.think_jitter * Math.random());
  const t0 = Date.now();
  const from = t0 + warmupS * 1000;
  const until = from + seconds * 1000;
  let requests = 0;
  await Promise.all(
    cookies.map(async (cookie, i) => {
      const agent = lib.keepAliveAgent(1);
      const order = targets.map((_, k) => (k + i) % targets.length);
      try {
        await sleep(Math.random() * SETTINGS.think_ms);
        for (let n = 0; Date.now() < until; n++) {
          const k = order[n % order.length];
          const sent = Date.now();
          const res = await call(port, { path: targets[k].url, headers: { cookie }, agent });
          check(targets[k].url, res);
          if (sent >= from && sent < until) {
            times[k].push(res.ms);
            requests++;
          }
          await sleep(think());
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const pooled = (log) => lib.summariseMs(targets.flatMap((t, k) => (t.log === log ? times[k] : [])));
  const logs = [...new Set(targets.map((t) => t.log))];
  return {
    sessions: cookies.length,
    think_ms: SETTINGS.think_ms,
    think_jitter: SETTINGS.think_jitter,
    seconds,
    pages_per_s: +(requests / seconds).toFixed(1),
    by_log: logs.map((log) => ({ log, ...pooled(log), requests: targets.reduce((n, t, k) => n + (t.log === log ? times[k].length : 0), 0) })),
    results: targets.map((t, k) => ({ log: t.log, page: t.page, ...lib.summariseMs(times[k]), requests: times[k].length })),
  };
}

/** The four pages of one webhook's Deliveries. */
async function pagesOf(db, hook, size) {
  const base = `/console/connections/${hook.connectionId}/webhooks/${hook.id}/deliveries`;
  const deep = `${base}?cursor=${await cursorAfter(db, hook, Math.floor(size * SETTINGS.deep_fraction))}`;
  const urls = [base, deep, `${base}?state=failed`, `${base}?event=user.joined`];
  return PAGES.map((page, k) => ({ log: size, page, url: urls[k] }));
}

const find = (phase, log, page) => phase.results.find((r) => r.log === log && r.page === page);

async function waitForQuiet() {
  const until = Date.now() + SETTINGS.quiet_wait_s * 1000;
  while (os.loadavg()[0] > SETTINGS.quiet_load && Date.now() < until) await sleep(5000);
  const load = +os.loadavg()[0].toFixed(2);
  if (load > SETTINGS.quiet_load) say(`warning: load average still ${load}; measuring anyway (the numbers will be noisy)`);
  return load;
}

function markdown(report) {
  const { small, large } = report.sizes;
  const n = (x) => x.toLocaleString('en');
  const both = report.phases.both;
  const paced = report.phases.paced;
  const alone = report.phases.one_session;
  const lines = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}; load average (1 min) at the start: ${report.machine.load_average_1m_before}; before the closed loop: ${both.load_average_1m_before} (after: ${both.load_average_1m_after}); before the paced run: ${paced.load_average_1m_before} (after: ${paced.load_average_1m_after}). The machine (2 cores) was shared with other work while this ran${report.machine.load_average_1m_before > 2 ? ': a load average above 2 means other processes were taking CPU from the api, Postgres and the load generator' : ''}.`,
    `Two webhooks of one connection, with ${n(small)} and ${n(large)} logged deliveries (${n(small + large)} rows in webhook_deliveries, one attempt each where attempted). Their Deliveries pages (HTML, ${SETTINGS.page_size} deliveries with their attempts), each signed-in session on its own HTTPS keep-alive connection calling all eight pages in turn (rotating order); api NODE_ENV=${SETTINGS.api_node_env}, LOG_LEVEL=${SETTINGS.api_log_level}, local Postgres and Redis; load generator on the same machine.`,
    `"deep" starts ${Math.round(SETTINGS.deep_fraction * 100)}% of the way down the log (a signed cursor built from a known row, as the Older link would carry); the filtered pages are the first page of state=failed (1 in 20) and of event=user.joined (1 in 4).`,
    '',
    `**Paced (the targets): ${paced.sessions} sessions used as people use the console**, each loading a page, then pausing ${SETTINGS.think_ms} ms ±${SETTINGS.think_jitter * 100}% (uniform) before the next; ${paced.seconds} s measured after ${SETTINGS.paced_warmup_s} s of warm-up; ${paced.pages_per_s} pages/s offered and served.`,
    '',
    `| log | pages measured | p50 ms | p99 ms | max ms |`,
    '|---|---:|---:|---:|---:|',
    ...paced.by_log.map((r) => `| ${n(r.log)} (all four pages) | ${r.requests} | ${r.p50_ms} | ${r.p99_ms} | ${r.max_ms} |`),
    '',
    `| page | p50 ms, ${n(small)} | p99 ms, ${n(small)} | p50 ms, ${n(large)} | p99 ms, ${n(large)} | p50 ratio | within ${TARGET_RATIO}× | p99 < ${TARGET_P99_MS} ms | one session alone: p50 ms, ${n(small)} / ${n(large)} |`,
    '|---|---:|---:|---:|---:|---:|---|---|---|',
  ];
  for (const c of report.comparison) {
    lines.push(
      `| ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_ratio ? 'yes' : '**no**'} | ${c.p99_met ? 'yes' : '**no**'} | ${find(alone, small, c.page).p50_ms} / ${find(alone, large, c.page).p50_ms} |`,
    );
  }
  lines.push(
    '',
    `**Closed loop (capacity): ${both.sessions} sessions without think time**, each sending its next request the moment the last answer arrives (${both.sessions} requests always in flight, the machine saturated), ${SETTINGS.rounds} measured rounds after ${SETTINGS.warmup_rounds} warm-up rounds: **${both.pages_per_s} pages/s**. Its latencies are mostly time spent queueing behind the other ${both.sessions - 1} requests, not the page's cost:`,
    '',
    `| page | p50 ms, ${n(small)} | p99 ms, ${n(small)} | p50 ms, ${n(large)} | p99 ms, ${n(large)} | p50 ratio |`,
    '|---|---:|---:|---:|---:|---:|',
    ...report.comparison.map(
      (c) =>
        `| ${c.page} | ${c.closed_loop.small.p50_ms} | ${c.closed_loop.small.p99_ms} | ${c.closed_loop.large.p50_ms} | ${c.closed_loop.large.p99_ms} | ${c.closed_loop.p50_ratio} |`,
    ),
  );
  const before = report.phases.small_log_alone;
  lines.push(
    '',
    `Before the large log existed, the ${n(small)}-delivery pages in the closed loop measured p50 ${PAGES.map((p) => find(before, small, p).p50_ms).join(' / ')} ms (${PAGES.join(' / ')}; load average ${before.load_average_1m_before}).`,
    `Deep page of the ${n(large)} log in Postgres: ${report.deep_plan.node} on ${report.deep_plan.index} (${report.deep_plan.rows_removed_by_filter} rows removed by filter), ${report.deep_plan.execution_ms} ms. Logs grown in ${report.insert_s.small} s and ${report.insert_s.large} s (generate_series + VACUUM ANALYZE).`,
    '',
    `Targets, read on the paced run (first and deep page p50 of the ${n(large)} log within ${TARGET_RATIO}× of the ${n(small)} log's; their p99 under ${TARGET_P99_MS} ms with ${SETTINGS.sessions} concurrent sessions): size **${report.ratio_met ? 'met' : 'not met'}**, p99 **${report.p99_met ? 'met' : 'not met'}**.`,
    '',
  );
  return lines.join('\n');
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be noisy`);
  if (!fs.existsSync(path.join(distDir, 'apps/api/src/console/deliveries.controller.js')))
    throw new Error(`${distDir} is missing or old: run \`npm run build\` first`);
  const [small, large] = SETTINGS.sizes;
  await lib.recreateDatabase(server, DB_NAME);
  const port = await lib.freePort(HOST);
  const baseEnv = env({ ...(await lib.ensureCert(work, HOST)), PORT: String(port), PUBLIC_BASE_URL: `https://${HOST}:${port}` });
  const admin = (args) => lib.admin(args, { dist: distDir, env: baseEnv, timeout: 120000 });
  const tenant = lib.makeTenant(admin, { org: 'bench console', connection: 'bench console', key: false });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId}`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const hooks = {};
  for (const [name, size] of [
    ['small', small],
    ['large', large],
  ]) {
    const [row] = (
      await db.query(`INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, $3, $4, 'whsec_bench') RETURNING id`, [
        tenant.organisationId,
        tenant.connectionId,
        `https://hooks.example.com/bench-${size}`,
        ['conversation.ended', 'summary.ready', 'document.translated', 'user.joined'],
      ])
    ).rows;
    hooks[name] = { id: String(row.id), organisationId: tenant.organisationId, connectionId: tenant.connectionId };
  }
  const [group] = (
    await db.query(`INSERT INTO groups (organisation_id, name, permissions) VALUES ($1, 'Integration managers', '{integrations.manage}') RETURNING id`, [
      tenant.organisationId,
    ])
  ).rows;
  const [person] = (
    await db.query(
      `INSERT INTO people (email, name, organisation_id, group_id, joined_at) VALUES ('manager@bench-console.example.org', 'Bench Manager', $1, $2, now()) RETURNING id`,
      [tenant.organisationId, group.id],
    )
  ).rows;
  const api = lib.start('api', [path.join(distDir, 'apps/api/src/main.js')], baseEnv);
  const phases = {};
  const insert_s = {};
  let deepPlan;
  const report = (name, phase) => {
    for (const r of phase.results) say(`${name}: ${r.log.toLocaleString('en')} log, ${r.page}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms`);
  };
  try {
    await lib.waitReady('the api', api, async () => {
      const res = await call(port, { path: '/health/ready' }).catch(() => null);
      return res && res.status === 200;
    });
    const cookies = [];
    for (let i = 0; i < SETTINGS.sessions; i++) cookies.push(await signIn(port, admin, String(person.id)));
    say(`${cookies.length} sessions signed in through \`admin console link\``);

    insert_s.small = (await grow(db, hooks.small, 1, small)).insert_s;
    const smallPages = await pagesOf(db, hooks.small, small);
    let loadBefore = await waitForQuiet();
    phases.small_log_alone = { load_average_1m_before: loadBefore, ...(await measurePhase(port, cookies, smallPages)) };
    report('small log alone', phases.small_log_alone);

    say(`growing the second webhook's log to ${large} deliveries…`);
    insert_s.large = (await grow(db, hooks.large, 1, large)).insert_s;
    say(`grown in ${insert_s.large} s`);
    const targets = [...smallPages, ...(await pagesOf(db, hooks.large, large))];
    loadBefore = await waitForQuiet();
    phases.both = { load_average_1m_before: loadBefore, ...(await measurePhase(port, cookies, targets)) };
    phases.both.load_average_1m_after = +os.loadavg()[0].toFixed(2);
    report(`${SETTINGS.sessions} sessions, closed loop`, phases.both);
    say(
      `${SETTINGS.sessions} sessions paced (think time ${SETTINGS.think_ms} ms ±${SETTINGS.think_jitter * 100}%) for ${SETTINGS.paced_warmup_s} + ${SETTINGS.paced_s} s…`,
    );
    phases.paced = { load_average_1m_before: +os.loadavg()[0].toFixed(2), ...(await measurePaced(port, cookies, targets)) };
    phases.paced.load_average_1m_after = +os.loadavg()[0].toFixed(2);
    report(`${SETTINGS.sessions} sessions, paced`, phases.paced);
    phases.one_session = { load_average_1m_before: +os.loadavg()[0].toFixed(2), ...(await measurePhase(port, cookies.slice(0, 1), targets, 100, 20)) };
    report('one session', phases.one_session);
    deepPlan = await explainDeep(db, hooks.large, Math.floor(large * SETTINGS.deep_fraction));
  } finally {
    await db.end();
    await lib.stop(api);
  }
  // The targets are read on the paced run (20 sessions as people use the console); the closed loop's figures are kept beside them.
  const comparison = PAGES.map((page) => {
    const [a, b] = [find(phases.paced, small, page), find(phases.paced, large, page)];
    const ratio = +(b.p50_ms / a.p50_ms).toFixed(2);
    const [ca, cb] = [find(phases.both, small, page), find(phases.both, large, page)];
    return {
      page,
      small: a,
      large: b,
      p50_ratio: ratio,
      within_ratio: ratio <= TARGET_RATIO,
      p99_met: a.p99_ms < TARGET_P99_MS && b.p99_ms < TARGET_P99_MS,
      closed_loop: { small: ca, large: cb, p50_ratio: +(cb.p50_ms / ca.p50_ms).toFixed(2) },
    };
  });
  const targeted = comparison.filter((c) => c.page === 'first' || c.page === 'deep');
  const result = {
    benchmark:
      "The console's Deliveries page of a webhook with 1,000 and one with 1,000,000 logged deliveries (HTTPS, keep-alive): 20 sessions paced as people (the targets), 20 in a closed loop (capacity), one alone",
    date: new Date().toISOString(),
    commit: lib.gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), ...lib.machine() },
    settings: SETTINGS,
    sizes: { small, large },
    insert_s,
    phases,
    comparison,
    deep_plan: deepPlan,
    target: { max_p50_ratio: TARGET_RATIO, max_p99_ms: TARGET_P99_MS, pages: ['first', 'deep'], read_on: 'paced' },
    ratio_met: targeted.every((c) => c.within_ratio),
    p99_met: targeted.every((c) => c.p99_met),
  };
  result.target_met = result.ratio_met && result.p99_met;
  const md = markdown(result);
  lib.writeResults('console', result, md, "The console's Deliveries page as the log grows");
  process.stdout.write(`\n${md}\nwritten: bench/results/console.json, bench/results/console.md\n`);
}

lib.runMain(main, { tag: 'bench:console', giveUpMinutes: 30 });
