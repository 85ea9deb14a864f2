#!/usr/bin/env node
// The Integrations section's Deliveries page (server-rendered HTML, 25 deliveries with their
// attempts, behind the console's session, CSRF and allow-list checks) of a webhook with 1,000 and of
// one with 1,000,000 logged deliveries (grown with SQL by bench/console-data.js), at four places: the
// first page, a deep page (a signed cursor 90% of the way down the log) and the first page filtered
// by state and by event. 20 sessions are signed in through `admin console link` and the link's
// button, each on its own HTTPS keep-alive connection calling the pages in a rotating order, so that
// the machine's drift weighs on both logs alike. Loaded three ways:
//  - paced (the targets are read on it): each session loads a page, then pauses a think time (1 s,
//    ±50% uniform) before the next, as a person reads a page: about 20 pages/s offered;
//  - closed loop (capacity): each session sends its next request the moment the last answer arrives;
//  - one session alone: the page's own latency without queueing;
// and the small log's pages in the closed loop before the large log exists. Against the built api
// (`npm run build` first).
'use strict';
const { Client } = require('pg');
const h = require('./harness');
const { cursorAfter, explainDeep, grow } = require('./console-data');
const { writeReport } = require('./markdown');

const work = h.workDir('bench-console');
/** The build to run (default dist/); BENCH_DIST points at a copy when dist/ is being rebuilt meanwhile. */
const distDir = h.distFrom();
const DB_NAME = 'integrations_bench_console';
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
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
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
const say = h.sayer('bench:console');
const { sleep } = h;
const env = (extra = {}) => h.appEnv({ ...SETTINGS, node_env: SETTINGS.api_node_env, log_level: SETTINGS.api_log_level }, { dataDir: work }, extra);
const quiet = () => h.waitForQuiet(SETTINGS.quiet_load, SETTINGS.quiet_wait_s, say);

/** An HTTPS request to the api whose body is read as text; on a connection of its own unless `agent` keeps one. */
const call = (port, { agent = false, ...options }) => h.request({ port, agent, ...options }).then((res) => ({ ...res, body: res.body.toString('utf8') }));

/** A Deliveries page loaded by the session of `cookie`. */
const page = (port, url, cookie, agent) => call(port, { path: url, headers: { cookie }, agent });

const cookieOf = (res, name) => {
  const set = [].concat(res.headers['set-cookie'] ?? []);
  const line = set.find((c) => c.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1).split(';')[0] : null;
};

/** Signs a session in the way the platform hands a person over: `admin console link`, the link page, its button. */
async function signIn(port, admin, personId) {
  const { url } = admin(['console', 'link', '--person', personId]);
  const link = new URL(url);
  const linkPage = await call(port, { path: `${link.pathname}${link.search}` });
  if (linkPage.status !== 200) throw new Error(`the sign-in link answered ${linkPage.status}`);
  const pre = cookieOf(linkPage, '__Host-ia-console-pre');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(linkPage.body)?.[1];
  const done = await call(port, {
    method: 'POST',
    path: '/console/sign-in/link',
    headers: { cookie: `__Host-ia-console-pre=${pre}`, origin: `https://127.0.0.1:${port}` },
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
 * Runs `session(load)` for each of `cookies` (a session) at once, each on its own keep-alive connection:
 * `load(n)` loads its n-th page (the targets in a rotating order, each session starting at another) and
 * checks it, answering the target's index and the answer.
 */
function inSessions(port, cookies, targets, session) {
  return Promise.all(
    cookies.map(async (cookie, i) => {
      const agent = h.keepAliveAgent(1);
      const order = h.rotated(
        targets.map((_, k) => k),
        i,
      );
      const load = async (n) => {
        const k = order[n % order.length];
        const res = await page(port, targets[k].url, cookie, agent);
        check(targets[k].url, res);
        return { k, res };
      };
      try {
        await session(load);
      } finally {
        agent.destroy();
      }
    }),
  );
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
  await inSessions(port, cookies, targets, async (load) => {
    for (let n = 0; n < (warmup + rounds) * targets.length; n++) {
      const { k, res } = await load(n);
      if (n >= warmup * targets.length) {
        times[k].push(res.ms);
        requests++;
      }
    }
  });
  const seconds = (Date.now() - started) / 1000;
  return {
    sessions: cookies.length,
    pages_per_s: Math.round((requests * (warmup + rounds)) / rounds / seconds),
    results: targets.map((t, k) => ({ log: t.log, page: t.page, ...h.summariseMs(times[k]), requests: times[k].length })),
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
  await inSessions(port, cookies, targets, async (load) => {
    await sleep(Math.random() * SETTINGS.think_ms);
    for (let n = 0; Date.now() < until; n++) {
      const sent = Date.now();
      const { k, res } = await load(n);
      if (sent >= from && sent < until) {
        times[k].push(res.ms);
        requests++;
      }
      await sleep(think());
    }
  });
  const pooled = (log) => h.summariseMs(targets.flatMap((t, k) => (t.log === log ? times[k] : [])));
  const logs = [...new Set(targets.map((t) => t.log))];
  return {
    sessions: cookies.length,
    think_ms: SETTINGS.think_ms,
    think_jitter: SETTINGS.think_jitter,
    seconds,
    pages_per_s: +(requests / seconds).toFixed(1),
    by_log: logs.map((log) => ({ log, ...pooled(log), requests: targets.reduce((n, t, k) => n + (t.log === log ? times[k].length : 0), 0) })),
    results: targets.map((t, k) => ({ log: t.log, page: t.page, ...h.summariseMs(times[k]), requests: times[k].length })),
  };
}

/** The four pages of one webhook's Deliveries. */
async function pagesOf(db, hook, size) {
  const base = `/console/connections/${hook.connectionId}/webhooks/${hook.id}/deliveries`;
  const deep = `${base}?cursor=${await cursorAfter(distDir, db, hook, Math.floor(size * SETTINGS.deep_fraction))}`;
  const urls = [base, deep, `${base}?state=failed`, `${base}?event=user.joined`];
  return PAGES.map((page, k) => ({ log: size, page, url: urls[k] }));
}

const find = (phase, log, page) => phase.results.find((r) => r.log === log && r.page === page);

async function main() {
  const load = h.loadBefore(say);
  h.requireBuilds([distDir], ['api', 'admin', 'WebhooksConsoleModule']);
  const [small, large] = SETTINGS.sizes;
  await h.recreateDatabase(SETTINGS.database_url);
  const port = await h.freePort();
  const baseEnv = env({ ...(await h.ensureCert(work)), PORT: String(port), PUBLIC_BASE_URL: `https://127.0.0.1:${port}` });
  const admin = (args) => h.admin(args, { dist: distDir, env: baseEnv, timeout: 120000 });
  const tenant = h.makeTenant(admin, { org: 'bench console', connection: 'bench console', key: false });
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
  const phases = {};
  const insert_s = {};
  let deepPlan;
  const report = (name, phase) => {
    for (const r of phase.results) say(`${name}: ${r.log.toLocaleString('en')} log, ${r.page}: p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms`);
  };
  try {
    await h.startApi('api', { dist: distDir, env: baseEnv, port });
    const cookies = [];
    for (let i = 0; i < SETTINGS.sessions; i++) cookies.push(await signIn(port, admin, String(person.id)));
    say(`${cookies.length} sessions signed in through \`admin console link\``);

    insert_s.small = (await grow(db, hooks.small, 1, small)).insert_s;
    const smallPages = await pagesOf(db, hooks.small, small);
    let loadBefore = await quiet();
    phases.small_log_alone = { load_average_1m_before: loadBefore, ...(await measurePhase(port, cookies, smallPages)) };
    report('small log alone', phases.small_log_alone);

    say(`growing the second webhook's log to ${large} deliveries…`);
    insert_s.large = (await grow(db, hooks.large, 1, large)).insert_s;
    say(`grown in ${insert_s.large} s`);
    const targets = [...smallPages, ...(await pagesOf(db, hooks.large, large))];
    loadBefore = await quiet();
    phases.both = { load_average_1m_before: loadBefore, ...(await measurePhase(port, cookies, targets)) };
    phases.both.load_average_1m_after = h.loadAverage();
    report(`${SETTINGS.sessions} sessions, closed loop`, phases.both);
    say(
      `${SETTINGS.sessions} sessions paced (think time ${SETTINGS.think_ms} ms ±${SETTINGS.think_jitter * 100}%) for ${SETTINGS.paced_warmup_s} + ${SETTINGS.paced_s} s…`,
    );
    phases.paced = { load_average_1m_before: h.loadAverage(), ...(await measurePaced(port, cookies, targets)) };
    phases.paced.load_average_1m_after = h.loadAverage();
    report(`${SETTINGS.sessions} sessions, paced`, phases.paced);
    phases.one_session = { load_average_1m_before: h.loadAverage(), ...(await measurePhase(port, cookies.slice(0, 1), targets, 100, 20)) };
    report('one session', phases.one_session);
    deepPlan = await explainDeep(db, hooks.large, Math.floor(large * SETTINGS.deep_fraction), SETTINGS.page_size);
  } finally {
    await db.end();
    await h.stopAll();
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
    commit: h.gitCommit(),
    machine: { load_average_1m_before: load, ...h.machine() },
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
  process.stdout.write(`\n${writeReport('console', result)}\n`);
}

h.runMain(main, { tag: 'bench:console', giveUpMinutes: 30 });
