#!/usr/bin/env node
// The Integrations section's Deliveries page as a webhook's log grows: its first page, a deep page
// (a cursor 90% of the way down the log) and two filtered first pages, at 1,000 and at 1,000,000
// logged deliveries of one webhook, loaded by 20 signed-in sessions at once over HTTPS keep-alive
// against the built api (`npm run build` first). Loopback only; a dedicated database it drops and
// recreates; it stops by itself and kills its children on the way out. See bench/README.md.
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
     SELECT md5('bench-delivery-' || i), $1, $2, $3,
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
     SELECT md5('bench-delivery-' || i), 1, 1, '2026-11-01T00:00:00Z'::timestamptz - i * interval '1 second' + interval '40 milliseconds',
            i % 20 <> 0, CASE WHEN i % 20 = 0 THEN 503 ELSE 200 END, 40 + i % 60, CASE WHEN i % 20 = 0 THEN 'answered 503' END
       FROM generate_series($1::int, $2::int) AS i
      WHERE NOT (i % 20 <> 0 AND i % 50 = 1)`,
    [from, total],
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
        agent,
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
 * `sessions` concurrent sessions, each on its own keep-alive connection, each calling the pages in
 * turn (warm-up rounds discarded), so a change of load on the machine weighs on every page alike.
 */
async function measurePhase(port, cookies, urls) {
  const times = Object.fromEntries(PAGES.map((p) => [p, []]));
  const started = Date.now();
  let requests = 0;
  await Promise.all(
    cookies.map(async (cookie, i) => {
      const agent = lib.keepAliveAgent(1);
      const order = PAGES.map((_, k) => PAGES[(k + i) % PAGES.length]);
      try {
        for (let round = 0; round < SETTINGS.warmup_rounds + SETTINGS.rounds; round++) {
          for (const page of order) {
            const res = await call(port, { path: urls[page], headers: { cookie }, agent });
            check(urls[page], res);
            if (round >= SETTINGS.warmup_rounds) {
              times[page].push(res.ms);
              requests++;
            }
          }
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  const pages = Object.fromEntries(PAGES.map((p) => [p, { ...lib.summariseMs(times[p]), requests: times[p].length }]));
  return { pages, requests_per_s: Math.round(requests / ((Date.now() - started) / 1000)) };
}

async function waitForQuiet() {
  const until = Date.now() + SETTINGS.quiet_wait_s * 1000;
  while (os.loadavg()[0] > SETTINGS.quiet_load && Date.now() < until) await sleep(5000);
  const load = +os.loadavg()[0].toFixed(2);
  if (load > SETTINGS.quiet_load) say(`warning: load average still ${load}; measuring anyway (the numbers will be noisy)`);
  return load;
}

function markdown(report) {
  const [small, large] = report.sizes;
  const n = (x) => x.toLocaleString('en');
  const lines = [
    `Run ${report.date} on ${report.machine.cpus} × ${report.machine.cpu_model}, node ${report.machine.node}, commit ${report.commit ?? '?'}; load average (1 min) before measuring: ${small.load_average_1m_before} at ${n(small.deliveries)}, ${large.load_average_1m_before} at ${n(large.deliveries)}.`,
    `One webhook's Deliveries page (HTML, ${SETTINGS.page_size} deliveries with their attempts), ${SETTINGS.sessions} signed-in sessions at once, each on its own HTTPS keep-alive connection, ${SETTINGS.rounds} rounds of the four pages per session after ${SETTINGS.warmup_rounds} warm-up rounds; api NODE_ENV=${SETTINGS.api_node_env}, LOG_LEVEL=${SETTINGS.api_log_level}, local Postgres and Redis; load generator on the same machine.`,
    `"deep" starts ${Math.round(SETTINGS.deep_fraction * 100)}% of the way down the log (a signed cursor built from a known row); the filtered pages are the first page of state=failed (1 in 20) and of event=user.joined (1 in 4).`,
    '',
    `| page | p50 ms at ${n(small.deliveries)} | p99 ms at ${n(small.deliveries)} | p50 ms at ${n(large.deliveries)} | p99 ms at ${n(large.deliveries)} | p50 ratio | within ${TARGET_RATIO}× | p99 < ${TARGET_P99_MS} ms |`,
    '|---|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const c of report.comparison) {
    lines.push(
      `| ${c.page} | ${c.small.p50_ms} | ${c.small.p99_ms} | ${c.large.p50_ms} | ${c.large.p99_ms} | ${c.p50_ratio} | ${c.within_ratio ? 'yes' : '**no**'} | ${c.p99_met ? 'yes' : '**no**'} |`,
    );
  }
  lines.push(
    '',
    `Throughput: ${small.requests_per_s} pages/s at ${n(small.deliveries)}, ${large.requests_per_s} pages/s at ${n(large.deliveries)}. Log grown in ${small.insert_s} s and ${large.insert_s} s (insert with generate_series + VACUUM ANALYZE).`,
    `Deep page at ${n(large.deliveries)}: ${report.deep_plan.node} on ${report.deep_plan.index} (${report.deep_plan.rows_removed_by_filter} rows removed by filter), ${report.deep_plan.execution_ms} ms in Postgres.`,
    '',
    `Targets (first and deep page p50 at ${n(large.deliveries)} within ${TARGET_RATIO}× of ${n(small.deliveries)}; p99 under ${TARGET_P99_MS} ms at ${SETTINGS.sessions} sessions): **${report.target_met ? 'met' : 'not met'}**.`,
    '',
  );
  return lines.join('\n');
}

async function main() {
  const load = os.loadavg()[0];
  if (load > 0.5) say(`warning: the machine is busy (load average ${load.toFixed(2)}): numbers will be noisy`);
  if (!fs.existsSync(path.join(distDir, 'apps/api/src/console/deliveries.controller.js')))
    throw new Error(`${distDir} is missing or old: run \`npm run build\` first`);
  await lib.recreateDatabase(server, DB_NAME);
  const port = await lib.freePort(HOST);
  const baseEnv = env({ ...(await lib.ensureCert(work, HOST)), PORT: String(port), PUBLIC_BASE_URL: `https://${HOST}:${port}` });
  const admin = (args) => lib.admin(args, { dist: distDir, env: baseEnv, timeout: 120000 });
  const tenant = lib.makeTenant(admin, { org: 'bench console', connection: 'bench console', key: false });
  say(`created ${DB_NAME} (${tenant.applied.length} migrations), organisation ${tenant.organisationId}`);
  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const [hookRow] = (
    await db.query(
      `INSERT INTO webhooks (organisation_id, connection_id, url, events, secret) VALUES ($1, $2, 'https://hooks.example.com/bench', $3, 'whsec_bench') RETURNING id`,
      [tenant.organisationId, tenant.connectionId, ['conversation.ended', 'summary.ready', 'document.translated', 'user.joined']],
    )
  ).rows;
  const hook = { id: String(hookRow.id), organisationId: tenant.organisationId, connectionId: tenant.connectionId };
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
  const sizes = [];
  let deepPlan;
  try {
    await lib.waitReady('the api', api, async () => {
      const res = await call(port, { path: '/health/ready' }).catch(() => null);
      return res && res.status === 200;
    });
    const cookies = [];
    for (let i = 0; i < SETTINGS.sessions; i++) cookies.push(await signIn(port, admin, String(person.id)));
    say(`${cookies.length} sessions signed in through \`admin console link\``);
    const base = `/console/connections/${hook.connectionId}/webhooks/${hook.id}/deliveries`;
    let have = 0;
    for (const size of SETTINGS.sizes) {
      say(`growing the log to ${size} deliveries…`);
      const grown = await grow(db, hook, have + 1, size);
      have = size;
      say(`the webhook holds ${grown.deliveries} deliveries (inserted and analysed in ${grown.insert_s} s)`);
      const deepAfter = Math.floor(size * SETTINGS.deep_fraction);
      const urls = {
        first: base,
        deep: `${base}?cursor=${await cursorAfter(db, hook, deepAfter)}`,
        'failed, first': `${base}?state=failed`,
        'user.joined, first': `${base}?event=user.joined`,
      };
      const loadBefore = await waitForQuiet();
      const phase = await measurePhase(port, cookies, urls);
      for (const p of PAGES) say(`${size} deliveries, ${p}: p50 ${phase.pages[p].p50_ms} ms, p99 ${phase.pages[p].p99_ms} ms`);
      deepPlan = await explainDeep(db, hook, deepAfter);
      sizes.push({ ...grown, deep_after_rows: deepAfter, load_average_1m_before: loadBefore, load_average_1m_after: +os.loadavg()[0].toFixed(2), ...phase });
    }
  } finally {
    await db.end();
    await lib.stop(api);
  }
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  const comparison = PAGES.map((page) => {
    const ratio = +(large.pages[page].p50_ms / small.pages[page].p50_ms).toFixed(2);
    return {
      page,
      small: small.pages[page],
      large: large.pages[page],
      p50_ratio: ratio,
      within_ratio: ratio <= TARGET_RATIO,
      p99_met: small.pages[page].p99_ms < TARGET_P99_MS && large.pages[page].p99_ms < TARGET_P99_MS,
    };
  });
  const report = {
    benchmark: "The console's Deliveries page as a webhook's log grows (HTTPS, 20 concurrent sessions, keep-alive)",
    date: new Date().toISOString(),
    commit: lib.gitCommit(),
    machine: { load_average_1m_before: +load.toFixed(2), ...lib.machine() },
    settings: SETTINGS,
    sizes,
    comparison,
    deep_plan: deepPlan,
    target: { max_p50_ratio: TARGET_RATIO, max_p99_ms: TARGET_P99_MS, pages: ['first', 'deep'] },
    target_met: comparison.filter((c) => c.page === 'first' || c.page === 'deep').every((c) => c.within_ratio && c.p99_met),
  };
  const md = markdown(report);
  lib.writeResults('console', report, md, "The console's Deliveries page as the log grows");
  process.stdout.write(`\n${md}\nwritten: bench/results/console.json, bench/results/console.md\n`);
}

lib.runMain(main, { tag: 'bench:console', giveUpMinutes: 25 });
