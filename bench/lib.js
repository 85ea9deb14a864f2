// Helpers every benchmark script shares: child processes and the way out, the admin CLI, HTTPS to
// the loopback api, the dedicated database, the report's commit and machine, results files.
// Plain CommonJS, loopback only.
'use strict';
const { execFileSync, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

/** The checkout: the working directory of every child, of the admin CLI and of swc. */
const root = path.resolve(__dirname, '..');
const resultsDir = path.join(__dirname, 'results');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The q-quantile (0..1) of an ascending array. */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

/** p50, p99, mean and max of millisecond timings, to two decimals. */
function summariseMs(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const r = (x) => +x.toFixed(2);
  return {
    p50_ms: r(quantile(sorted, 0.5)),
    p99_ms: r(quantile(sorted, 0.99)),
    mean_ms: r(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    max_ms: r(sorted[sorted.length - 1]),
  };
}

/** A self-signed certificate for localhost/`host` under `dir/tls`, made once; as TLS_* settings. */
async function ensureCert(dir, host = '127.0.0.1') {
  const cert = path.join(dir, 'tls', 'localhost.crt');
  const key = path.join(dir, 'tls', 'localhost.key');
  if (!fs.existsSync(cert) || !fs.existsSync(key)) {
    const pems = await require('selfsigned').generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: host },
          ],
        },
      ],
    });
    fs.mkdirSync(path.dirname(cert), { recursive: true });
    fs.writeFileSync(cert, pems.cert);
    fs.writeFileSync(key, pems.private, { mode: 0o600 });
  }
  return { TLS_CERT_FILE: cert, TLS_KEY_FILE: key };
}

/** A TCP port that is free on `host` right now. */
function freePort(host = '127.0.0.1') {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, host, () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** The commit measured, and whether the sources measured differ from it (uncommitted changes under apps/ or libs/); null outside a git checkout. */
function gitCommit() {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'apps', 'libs'], { cwd: root, encoding: 'utf8' }).trim();
    return changed ? `${commit} (with uncommitted changes to apps/ or libs/)` : commit;
  } catch {
    return null;
  }
}

/** What a report says of the machine after its load average. */
const machine = () => ({
  node: process.version,
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model.trim(),
  memory_gib: Math.round(os.totalmem() / 2 ** 30),
});

// ---- child processes ----

/**
 * CPU time process `pid` has used so far, in ms: utime + stime from /proc/<pid>/stat (fields 14 and
 * 15, in clock ticks; USER_HZ is 100 on Linux). Read around a measured slice, it gives the CPU a
 * request costs the process, which moves far less with other work on a shared machine than req/s.
 */
function cpuMs(pid) {
  return statCpuMs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
}

/** utime + stime in ms from the text of a /proc/<pid>/stat (the fields after the name, which may hold spaces or parentheses). */
function statCpuMs(stat) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The machine's CPU by part, for one measured phase: `parts` names a pid for each of the bench's own
 * processes (`self` is this process), and the local Postgres and Redis servers are counted over every
 * process of theirs (`postgres` backends and helpers, `redis-server`), read from /proc like cpuMs.
 * Call it before and after the phase and hand both to cpuPerItem, which counts each server process
 * by what it used between the two (all of it for one started in between). A server process that
 * exits in between (a pooled connection closed as idle) is left out: what it used in the phase is lost.
 */
function machineCpu(parts) {
  const servers = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const part = name === 'postgres' ? 'postgres' : name === 'redis-server' ? 'redis' : null;
    if (!part) continue;
    servers[entry] = { part, ms: statCpuMs(stat) };
  }
  const own = {};
  for (const [part, pid] of Object.entries(parts)) {
    if (pid === 'self') {
      const u = process.cpuUsage();
      own[part] = (u.user + u.system) / 1000;
    } else own[part] = cpuMs(pid);
  }
  return { servers, own };
}

/** What the machine used between two machineCpu readings, in ms per item (n items in the phase), by part and in all; and the cores it kept busy over `seconds`. */
function cpuPerItem(before, after, n, seconds) {
  const ms = { postgres: 0, redis: 0 };
  for (const [pid, { part, ms: used }] of Object.entries(after.servers)) {
    const earlier = before.servers[pid];
    // Less than before: the pid was reused by a process started in between.
    ms[part] += earlier && earlier.part === part && used >= earlier.ms ? used - earlier.ms : used;
  }
  for (const [part, used] of Object.entries(after.own)) ms[part] = used - (before.own[part] ?? 0);
  const by = {};
  let total = 0;
  for (const [part, v] of Object.entries(ms)) {
    by[part] = Math.round((v / n) * 1000) / 1000;
    total += v;
  }
  return { by, total: Math.round((total / n) * 1000) / 1000, cores_busy: seconds ? Math.round((total / 1000 / seconds) * 100) / 100 : null };
}

const children = new Set();
const exited = (proc) => proc.exitCode !== null || proc.signalCode !== null;

/** Counts `proc` among the children that are stopped or killed on the way out. */
function track(proc) {
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return proc;
}

/**
 * `node …args` in the checkout with `env`, every line of its stdout and stderr printed as `[name] line`.
 * With `stdoutFile`, its stdout goes to that file instead (truncated first): a process logging one line
 * per request at info must not have the load generator read and reprint its log (a container's log
 * collector is another process, not the client), and the file lets a bench count the lines.
 */
function start(name, args, env, { stdoutFile } = {}) {
  const out = stdoutFile ? fs.openSync(stdoutFile, 'w') : 'pipe';
  const proc = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', out, 'pipe'] });
  if (stdoutFile) fs.closeSync(out);
  for (const s of [proc.stdout, proc.stderr]) if (s) readline.createInterface({ input: s }).on('line', (l) => process.stdout.write(`[${name}] ${l}\n`));
  return track(proc);
}

/** Waits until a worker answers 200 on its health port's `/health/ready` (plain HTTP, not part of the api). */
function waitWorkerReady(proc, port, name = 'worker') {
  return waitReady(name, proc, () =>
    fetch(`http://127.0.0.1:${port}/health/ready`).then(
      async (r) => (await r.arrayBuffer(), r.ok),
      () => false,
    ),
  );
}

/** SIGTERM, then SIGKILL if `proc` is still there after `killAfterMs`; resolves once it has exited. */
function stop(proc, killAfterMs = 10000) {
  return new Promise((resolve) => {
    if (exited(proc)) return resolve();
    const timer = setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
    proc.once('exit', () => resolve(clearTimeout(timer)));
    proc.kill('SIGTERM');
  });
}

const stopAll = () => Promise.all([...children].map((proc) => stop(proc)));
const killAll = () => children.forEach((proc) => proc.kill('SIGKILL'));

/**
 * Polls `probe` every 200 ms for up to 60 s until it answers something truthy, and answers that;
 * fails as soon as `proc` has exited. `name` is what the errors call the child.
 */
async function waitReady(name, proc, probe, { at } = {}) {
  for (const until = Date.now() + 60000; Date.now() < until; await sleep(200)) {
    if (exited(proc)) throw new Error(`${name} exited before it was ready`);
    const ready = await probe();
    if (ready) return ready;
  }
  throw new Error(`${name} was not ready${at ? ` at ${at}` : ''} after 60 s`);
}

/**
 * Runs a benchmark's `main`: its children are killed if the process exits, stopped on SIGINT and
 * SIGTERM (exit 130) and after `giveUpMinutes` (exit 1); a failure is printed as `[tag] FAILED: …`
 * (exit 1). `cleanup` (by default: stop the children) runs on every way out.
 */
function runMain(main, { tag, giveUpMinutes, cleanup = stopAll }) {
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().then(() => process.exit(130)));
  setTimeout(() => {
    process.stdout.write(`[${tag}] gave up after ${giveUpMinutes} minutes\n`);
    cleanup().then(() => process.exit(1));
  }, giveUpMinutes * 60_000).unref();
  main().then(
    () => cleanup(),
    (err) => {
      process.stderr.write(`[${tag}] FAILED: ${err.stack ?? err}\n`);
      return cleanup().then(() => process.exit(1));
    },
  );
}

// ---- the code under test ----

/** Compiles apps/ and libs/ into `distDir` as `npm run build` does: a build of its own that `npm run build` cannot pull from under a run. */
function compileInto(distDir) {
  require('../scripts/build').buildInto(distDir);
}

/**
 * `node <dist>/apps/admin/src/main.js …args --json` with `env` (and `timeout` ms, if given): the
 * last JSON line it printed, parsed. Throws with its output when it fails or prints no JSON.
 */
function admin(args, { dist, env, timeout }) {
  const r = spawnSync(process.execPath, [path.join(dist, 'apps/admin/src/main.js'), ...args, '--json'], { cwd: root, env, encoding: 'utf8', timeout });
  if (r.status !== 0) throw new Error(`admin ${args.join(' ')} failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const line = r.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'));
  if (!line) throw new Error(`admin ${args.join(' ')} printed no JSON:\n${r.stdout}`);
  return JSON.parse(line);
}

/**
 * With `admin` (args → parsed JSON): migrates, then makes one organisation named `org`, a
 * connection with all scopes and, unless `key` is false, a key. `applied`: the migrations run now.
 */
function makeTenant(admin, { org, connection = 'bench', key = true }) {
  const { applied = [] } = admin(['migrate']);
  const organisation = admin(['org', 'create', '--name', org]);
  const conn = admin(['connection', 'create', '--org', organisation.id, '--name', connection, '--scopes', 'all']);
  const created = key ? admin(['key', 'create', '--connection', conn.id]) : undefined;
  return { applied, organisationId: organisation.id, connectionId: conn.id, keyId: created?.id, key: created?.key };
}

/** `url` (a Postgres URL) pointing at database `name` instead. */
const withDb = (url, name) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

/** Drops and recreates a dedicated database (it holds nothing but benchmark rows). */
async function recreateDatabase(serverUrl, name) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unsafe database name ${name}`);
  const { Client } = require('pg');
  const pg = new Client({ connectionString: serverUrl });
  await pg.connect();
  try {
    await pg.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await pg.query(`CREATE DATABASE ${name}`);
  } finally {
    await pg.end();
  }
}

// ---- HTTPS to the loopback api ----

/** A keep-alive agent for the api's self-signed certificate, at most `maxSockets` connections. */
const keepAliveAgent = (maxSockets) => new https.Agent({ keepAlive: true, maxSockets, rejectUnauthorized: false, servername: 'localhost' });

/**
 * One HTTPS request to the api on 127.0.0.1:`port` (its self-signed certificate accepted), through
 * `agent` if given; `json`, if given, is sent as the body with `contentType`. Answers
 * {status, body, ms}, ms from before the request to the end of the answer; rejects on a socket
 * error, or once no answer came within `timeout` ms.
 */
function request({ port, method = 'GET', path: pathAndQuery, headers = {}, json, contentType = 'application/json', agent, timeout = 10000 }) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: pathAndQuery,
        agent,
        timeout,
        rejectUnauthorized: false,
        servername: 'localhost',
        headers: payload ? { ...headers, 'content-type': contentType, 'content-length': payload.length } : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on ${method} ${pathAndQuery}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

// ---- results ----

/**
 * Writes results/`name`.json (the report) and results/`name`.md (`md`, under `# title` if given),
 * and copies `md` into bench/README.md between `<!-- name:results:start -->` and
 * `<!-- name:results:end -->` where it has both.
 */
function writeResults(name, report, md, title) {
  fs.mkdirSync(resultsDir, { recursive: true });
  fs.writeFileSync(path.join(resultsDir, `${name}.json`), `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(path.join(resultsDir, `${name}.md`), title ? `# ${title}\n\n${md}` : md);
  const readme = path.join(__dirname, 'README.md');
  const [open, close] = [`<!-- ${name}:results:start -->`, `<!-- ${name}:results:end -->`];
  const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : '';
  if (text.includes(open) && text.includes(close)) {
    fs.writeFileSync(readme, `${text.slice(0, text.indexOf(open) + open.length)}\n${md}${text.slice(text.indexOf(close))}`);
  }
}

module.exports = {
  admin,
  cpuMs,
  cpuPerItem,
  compileInto,
  ensureCert,
  freePort,
  gitCommit,
  keepAliveAgent,
  killAll,
  machine,
  machineCpu,
  makeTenant,
  quantile,
  recreateDatabase,
  request,
  root,
  runMain,
  sleep,
  start,
  stop,
  stopAll,
  summariseMs,
  track,
  waitWorkerReady,
  waitReady,
  withDb,
  writeResults,
};
