// The processes a bench starts (api, worker, admin CLI, receivers, stand-ins) and the way out:
// every child is tracked, stopped when the bench ends, fails or is interrupted, killed if it exits.
'use strict';
const { fork, spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const readline = require('node:readline');
const { entry } = require('./built');
const { request } = require('./load');
const { root } = require('./paths');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
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
 * collector is another process, not the client), and the file lets a bench count the lines. With
 * `dropStdout`, its stdout is dropped; with `quiet`, its stderr is also kept in `proc.stderrText` (for
 * the error if it fails) instead of printed.
 */
function start(name, args, env, { stdoutFile, quiet, dropStdout } = {}) {
  const out = stdoutFile ? fs.openSync(stdoutFile, 'w') : quiet || dropStdout ? 'ignore' : 'pipe';
  const proc = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', out, 'pipe'] });
  if (stdoutFile) fs.closeSync(out);
  if (quiet) {
    proc.stderrText = '';
    proc.stderr.on('data', (c) => (proc.stderrText += c));
  } else for (const s of [proc.stdout, proc.stderr]) if (s) readline.createInterface({ input: s }).on('line', (l) => process.stdout.write(`[${name}] ${l}\n`));
  return track(proc);
}

/**
 * `script` as a child with an IPC channel (its output inherited), answering once it sends `{ready: true}`:
 * `{proc, ask}`, where `ask(cmd)` sends `{cmd}` and answers the `cmd` field of its reply. Rejects with the
 * child's exit code in `err.exitCode` if it exits first.
 */
async function startIpc(script, env) {
  const proc = track(fork(script, [], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const ask = (cmd) =>
    new Promise((resolve) => {
      const onMessage = (m) => {
        if (m[cmd] !== undefined) {
          proc.off('message', onMessage);
          resolve(m[cmd]);
        }
      };
      proc.on('message', onMessage);
      proc.send({ cmd });
    });
  await new Promise((resolve, reject) => {
    proc.once('message', (m) => (m.ready ? resolve() : reject(new Error(`${script} did not start`))));
    proc.once('exit', (code) => reject(Object.assign(new Error(`${script} exited with ${code}`), { exitCode: code })));
  });
  return { proc, ask };
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
 * Polls `probe` every `everyMs` (200) for up to 60 s until it answers something truthy, and answers
 * that; fails as soon as `proc` has exited. `name` is what the errors call the child.
 */
async function waitReady(name, proc, probe, { at, everyMs = 200 } = {}) {
  for (const until = Date.now() + 60000; Date.now() < until; await sleep(everyMs)) {
    if (exited(proc)) throw new Error(`${name} exited before it was ready${proc.stderrText ? `:\n${proc.stderrText}` : ''}`);
    const ready = await probe();
    if (ready) return ready;
  }
  throw new Error(`${name} was not ready${at ? ` at ${at}` : ''} after 60 s${proc.stderrText ? `:\n${proc.stderrText}` : ''}`);
}

/**
 * Waits until GET `path` on 127.0.0.1:`port` answers 200 (over HTTPS unless `tls` is false); answers
 * that response. A worker's health port is plain HTTP.
 */
const waitHttpReady = (name, proc, port, { path = '/health/ready', tls = true, everyMs } = {}) =>
  waitReady(
    name,
    proc,
    () =>
      request({ port, path, tls, agent: false, timeout: 3000 }).then(
        (res) => res.status === 200 && res,
        () => false,
      ),
    { at: `${tls ? 'https' : 'http'}://127.0.0.1:${port}${path}`, everyMs },
  );

/** Waits until a worker answers 200 on its health port's `/health/ready` (plain HTTP, not part of the api). */
const waitWorkerReady = (proc, port, name = 'worker') => waitHttpReady(name, proc, port, { tls: false });

/**
 * The api of `dist` (or `node …args`) on `port` (a free one if not given) with `env`, once its
 * `/health/ready` answers 200: `{proc, port}`. `stdoutFile`, `dropStdout` and `quiet` as for start.
 */
async function startApi(name, { dist, args, env, port, ...output }) {
  port ??= await require('./setup').freePort();
  const proc = start(name, args ?? [entry(dist, 'api')], { ...env, PORT: String(port) }, output);
  await waitHttpReady(name, proc, port);
  return { proc, port };
}

/**
 * Runs a benchmark's `main`: its children are killed if the process exits, stopped on SIGINT and
 * SIGTERM (exit 130) and after `giveUpMinutes` (exit 1; no limit if null); a failure is printed as
 * `[tag] FAILED: …` (exit 1). `cleanup` (by default: stop the children) runs on every way out; with
 * `exit`, the process exits (0) once it has, whatever handles are still open.
 */
function runMain(main, { tag, giveUpMinutes, cleanup = stopAll, exit = false }) {
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => cleanup().then(() => process.exit(130)));
  if (giveUpMinutes)
    setTimeout(() => {
      process.stdout.write(`[${tag}] gave up after ${giveUpMinutes} minutes\n`);
      cleanup().then(() => process.exit(1));
    }, giveUpMinutes * 60_000).unref();
  main().then(
    () => cleanup().then(() => exit && process.exit(0)),
    (err) => {
      process.stderr.write(`[${tag}] FAILED: ${err.stack ?? err}\n`);
      return cleanup().then(() => process.exit(1));
    },
  );
}

// ---- the admin CLI ----

/**
 * `node <dist>'s admin …args --json` with `env` (and `timeout` ms, if given): the last JSON line it
 * printed, parsed. Throws with its output when it fails or prints no JSON.
 */
function admin(args, { dist, env, timeout }) {
  const r = spawnSync(process.execPath, [entry(dist, 'admin'), ...args, '--json'], { cwd: root, env, encoding: 'utf8', timeout });
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
 * connection with all scopes and, unless `key` is false, a key; with `domain`, that domain added to
 * the organisation (verified). `applied`: the migrations run now.
 */
function makeTenant(admin, { org, connection = 'bench', key = true, domain }) {
  const { applied = [] } = admin(['migrate']);
  const organisation = admin(['org', 'create', '--name', org]);
  const conn = admin(['connection', 'create', '--org', organisation.id, '--name', connection, '--scopes', 'all']);
  const created = key ? admin(['key', 'create', '--connection', conn.id]) : undefined;
  if (domain) admin(['org', 'domain', organisation.id, 'add', domain]);
  return { applied, organisationId: organisation.id, connectionId: conn.id, keyId: created?.id, key: created?.key };
}

module.exports = {
  admin,
  killAll,
  makeTenant,
  runMain,
  start,
  startApi,
  startIpc,
  stop,
  stopAll,
  track,
  waitHttpReady,
  waitReady,
  waitWorkerReady,
};
