// The containers as an operator runs them, driven from this machine with podman: the image built by
// scripts/image.sh, host networking (the machine's Postgres and Redis on 127.0.0.1), the non-root
// user, a read-only root filesystem with a tmpfs for DATA_DIR. Shared by test/containers/run.js and
// bench/containers.bench.js. Every container is labelled with its run, and removed on every way out.
'use strict';
const { execFile, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { dropDatabase, dropServerState, withDatabase } = require('../support/server-state');

const root = path.resolve(__dirname, '../..');
const IMAGE = process.env.IMAGE || 'localhost/integrations-api:local';
const LABEL = 'integrations-container-test';
const RUNTIME = process.env.PODMAN_RUNTIME || 'runc';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `podman <args>`: resolves {code, stdout, stderr}; never rejects (callers judge the code). */
function podman(args, { timeout = 180_000, input } = {}) {
  return new Promise((resolve) => {
    const child = execFile('podman', ['--runtime', RUNTIME, ...args], { timeout, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr: stderr || (err && !stdout ? String(err.message) : '') }),
    );
    if (input !== undefined) child.stdin.end(input);
  });
}

/** `podman <args>`, failing with its output unless it exits 0; resolves stdout. */
async function podmanOk(args, opts) {
  const r = await podman(args, opts);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Why podman cannot run containers here, or null when it can (`podman run` of the image itself). */
async function podmanUnusable() {
  const info = await podman(['info', '--format', '{{.Host.OCIRuntime.Name}}']).catch((e) => ({ code: 1, stderr: e.message }));
  if (info.code !== 0) return `podman info failed: ${info.stderr.trim() || 'podman not installed'}`;
  return null;
}

/** A TCP port free on 127.0.0.1 right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer().once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Removes the containers of runs whose process is gone (a run killed by SIGKILL cannot clean up). */
async function removeOrphans() {
  const out = await podman(['ps', '-a', '--filter', `label=${LABEL}`, '--format', `{{.ID}} {{index .Labels "${LABEL}"}}`]);
  for (const line of out.stdout.split('\n').filter(Boolean)) {
    const [id, owner] = line.split(' ');
    const pid = Number(String(owner).split('-')[0]);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (!alive) await podman(['rm', '-f', '-t', '0', id]);
  }
}

/**
 * One run's containers: names prefixed with the run, labelled, all removed by `cleanup()` (also on
 * exit, SIGINT, SIGTERM and an uncaught error).
 */
class Run {
  constructor(tag) {
    this.id = `${process.pid}-${tag}`;
    this.prefix = `ia-${tag}-${process.pid}`;
    this.names = new Set();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `${this.prefix}-`));
    fs.chmodSync(this.dir, 0o755);
    const sync = () => this.cleanupSync();
    process.once('exit', sync);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
      process.once(signal, () => {
        sync();
        process.exit(130);
      });
    }
  }

  name(role) {
    const name = `${this.prefix}-${role}`;
    this.names.add(name);
    return name;
  }

  /** Writes `text` into the run's directory (readable by the containers' user); answers its path. */
  file(name, text) {
    const p = path.join(this.dir, name);
    fs.writeFileSync(p, text, { mode: 0o644 });
    return p;
  }

  /** The arguments every container of the run gets: host network, read-only root, tmpfs DATA_DIR. */
  baseArgs(name) {
    return ['--name', name, '--label', `${LABEL}=${this.id}`, '--network=host', '--read-only', '--tmpfs', '/app/.data:rw,size=64m,U', '--init'];
  }

  static envArgs(env) {
    return Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  }

  /** Runs a one-shot container (`--rm`) to its end: {code, stdout, stderr}. */
  async once(role, command, env, mounts = []) {
    const name = this.name(role);
    const r = await podman(['run', '--rm', ...this.baseArgs(name), ...Run.envArgs(env), ...mounts, IMAGE, ...command]);
    this.names.delete(name);
    return r;
  }

  /** Starts a long-running container detached; answers its name. */
  async start(role, command, env, mounts = []) {
    const name = this.name(role);
    await podman(['rm', '-f', '-t', '0', name]);
    await podmanOk(['run', '-d', ...this.baseArgs(name), ...Run.envArgs(env), ...mounts, IMAGE, ...command]);
    return name;
  }

  async cleanup() {
    for (const name of this.names) await podman(['rm', '-f', '-t', '0', name]);
    this.names.clear();
  }

  cleanupSync() {
    if (this.names.size) {
      spawnSync('podman', ['--runtime', RUNTIME, 'rm', '-f', '-t', '0', ...this.names], { stdio: 'ignore' });
      this.names.clear();
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A container's state: running, exit code, pid (of its init), when it started and finished. */
async function state(name) {
  const out = await podmanOk(['inspect', '--format', '{{json .State}}', name]);
  return JSON.parse(out);
}

/** The logs of a container (stdout and stderr together). */
async function logs(name) {
  const r = await podman(['logs', name]);
  return `${r.stdout}${r.stderr}`;
}

/** The node process of a container: its init (catatonit) is the container's pid, node its child. */
async function nodePid(name) {
  const { Pid: pid } = await state(name);
  const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  if (comm === 'node') return pid;
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  const node = children.find((c) => fs.readFileSync(`/proc/${c}/comm`, 'utf8').trim() === 'node');
  if (!node) throw new Error(`${name}: no node process under pid ${pid}`);
  return node;
}

/** Resident memory of a container's node process, in MiB. */
async function rssMiB(name) {
  const text = fs.readFileSync(`/proc/${await nodePid(name)}/status`, 'utf8');
  return +(Number(/^VmRSS:\s+(\d+) kB/m.exec(text)[1]) / 1024).toFixed(1);
}

/**
 * One HTTPS (or plain HTTP with `tls: false`) request to 127.0.0.1:`port`, the api's certificate
 * checked against `ca`. Answers {status, headers, body (parsed JSON when it is JSON, else text)}.
 */
function call({ port, method = 'GET', path: p, key, json, ca, tls = true, headers = {}, timeout = 15_000 }) {
  return new Promise((resolve, reject) => {
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const req = (tls ? https : http).request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: p,
        timeout,
        agent: false,
        ...(tls ? { ca } : {}),
        headers: {
          ...headers,
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body = text;
          if (/json/.test(String(res.headers['content-type']))) body = JSON.parse(text);
          resolve({ status: res.statusCode, headers: res.headers, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on ${method} ${p}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Waits until `probe()` resolves true (checked every 250 ms), or fails after `seconds` with `what`. */
async function until(seconds, what, probe) {
  const deadline = Date.now() + seconds * 1000;
  let last;
  for (;;) {
    try {
      if (await probe()) return;
    } catch (err) {
      if (err.fatal) throw err;
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${seconds} s${last ? ` (last error: ${last.message})` : ''}`);
    await sleep(250);
  }
}

/** A self-signed certificate for 127.0.0.1 (and localhost): {cert, key} PEMs. */
async function selfSigned(commonName) {
  const pems = await require('selfsigned').generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/**
 * The webhook receiver on 127.0.0.1:443 (the contract's only port; needs root): records every POST
 * (path, headers, raw body) and answers 204, after `delayMs` for paths given in `slow`. Waits while
 * another run holds the port.
 */
async function startReceiver(tls, { waitForPortMs = 300_000 } = {}) {
  const received = [];
  const slow = new Map();
  let inFlight = 0;
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const entry = { path: req.url, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      const delay = [...slow].find(([prefix]) => req.url.startsWith(prefix))?.[1] ?? 0;
      inFlight++;
      setTimeout(() => {
        inFlight--;
        received.push(entry);
        res.writeHead(204).end();
      }, delay);
    });
  });
  const deadline = Date.now() + waitForPortMs;
  for (;;) {
    const err = await new Promise((resolve) => {
      const failed = (e) => {
        server.off('listening', listening);
        resolve(e);
      };
      const listening = () => {
        server.off('error', failed);
        resolve(null);
      };
      server.once('error', failed).once('listening', listening);
      server.listen(443, '127.0.0.1');
    });
    if (!err) break;
    if (err.code !== 'EADDRINUSE' || Date.now() > deadline) throw err;
    await sleep(2000);
  }
  return {
    received,
    slow,
    inFlight: () => inFlight,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Runs `main`; prints its error and exits 1 on failure, 0 on success, after the run's cleanup. */
function runMain(main, run) {
  main()
    .then(async () => {
      await run?.().cleanup?.();
      process.exit(0);
    })
    .catch(async (err) => {
      process.stderr.write(`\n${err instanceof Error ? err.stack : String(err)}\n`);
      await run?.()?.cleanup?.();
      process.exit(1);
    });
}

/**
 * The checks of a container test, numbered as they pass: `check(cond, what, detail)` prints
 * `ok N - what`, or throws FAILED with the detail; `say` heads a part; `passed()` counts.
 */
function checks() {
  let passed = 0;
  return {
    check(cond, what, detail) {
      if (!cond) throw new Error(`FAILED: ${what}${detail === undefined ? '' : `\n${typeof detail === 'string' ? detail : JSON.stringify(detail, null, 2)}`}`);
      passed++;
      process.stdout.write(`  ok ${passed} - ${what}\n`);
    },
    say: (line) => process.stdout.write(`\n# ${line}\n`),
    passed: () => passed,
  };
}

module.exports = {
  IMAGE,
  Run,
  call,
  checks,
  dropDatabase,
  dropServerState,
  freePort,
  logs,
  nodePid,
  podman,
  podmanOk,
  podmanUnusable,
  removeOrphans,
  root,
  rssMiB,
  runMain,
  selfSigned,
  sleep,
  startReceiver,
  state,
  until,
  withDatabase,
};
