#!/usr/bin/env node
// The containers as deployed: the image's size (and what takes it), its build time, each
// container's start-up time to ready, and each one's resident memory at idle and under the soak
// mix (bench/soak.bench.js's rates, for BENCH_SECONDS). Builds the image with scripts/image.sh
// (no layer cache, so the build time is a whole build; the local base is kept), then runs the api
// and the worker containers with podman on this machine's Postgres and Redis, the receiver
// (bench/receiver.js) on 127.0.0.2:443.
//   node bench/containers.bench.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { Client } = require('pg');
const h = require('./harness');
const { writeReport } = require('./markdown');
const c = require('../test/containers/podman');

const SECONDS = Number(process.env.BENCH_SECONDS || 120);
const BUILD = process.env.BENCH_BUILD !== '0';
const DB_NAME = 'integrations_bench_containers';
const PREFIX = 'iabenchcontainers';
// Not 127.0.0.1 (the test suite's receivers) nor 127.0.0.2 (bench/soak.bench.js's): this bench may run beside either.
const RECEIVER_HOST = process.env.BENCH_RECEIVER_HOST || '127.0.0.3';
const RATES = h.SOAK_RATES;
const say = h.sayer('bench:containers');
let run;

async function main() {
  const unusable = await c.podmanUnusable();
  if (unusable) throw new Error(`podman cannot run here: ${unusable}`);
  const load = h.loadBefore(say);
  const work = h.workDir('bench-containers');
  fs.mkdirSync(work, { recursive: true });
  const infoFile = path.join(work, 'image.json');
  if (BUILD) {
    say('building the image (scripts/image.sh, no layer cache)…');
    const built = spawnSync(path.join(c.root, 'scripts/image.sh'), [], {
      stdio: 'inherit',
      env: { ...process.env, IMAGE_NO_CACHE: '1', IMAGE_INFO_FILE: infoFile },
    });
    if (built.status !== 0) throw new Error('scripts/image.sh failed');
  } else if (!fs.existsSync(infoFile)) throw new Error(`BENCH_BUILD=0 needs ${infoFile} from an earlier run`);
  const image = JSON.parse(fs.readFileSync(infoFile, 'utf8'));
  const space = await c.podmanOk([
    'run',
    '--rm',
    '--network=host',
    '--entrypoint',
    'sh',
    c.IMAGE,
    '-c',
    'cd /app && du -sk dist node_modules; du -sk node_modules/* node_modules/@*/* 2>/dev/null | grep -v "node_modules/@[^/]*$" | sort -rn | head -12',
  ]);
  const sizes = space
    .trim()
    .split('\n')
    .map((l) => l.split('\t'))
    .map(([kb, p]) => ({ path: p, mb: +((Number(kb) * 1024) / 1e6).toFixed(1) }));

  run = new c.Run('bench');
  const databaseUrl = h.databaseUrl(DB_NAME);
  await h.recreateDatabase(databaseUrl);
  const tls = await h.ensureCert(path.join(work, 'api'), '127.0.0.1');
  const receiverTls = await h.ensureCert(path.join(work, RECEIVER_HOST), RECEIVER_HOST);
  run.file('tls.crt', fs.readFileSync(tls.TLS_CERT_FILE, 'utf8'));
  run.file('tls.key', fs.readFileSync(tls.TLS_KEY_FILE, 'utf8'));
  run.file('receiver-ca.crt', fs.readFileSync(receiverTls.TLS_CERT_FILE, 'utf8'));
  const mounts = ['-v', `${run.dir}:/run/secrets/integrations:ro`];
  const [apiPort, metricsPort, healthPort] = await Promise.all([c.freePort(), c.freePort(), c.freePort()]);
  const common = {
    DATABASE_URL: databaseUrl,
    REDIS_URL: h.redisUrl(),
    REDIS_PREFIX: PREFIX,
    LOG_LEVEL: 'info',
    MIGRATIONS_RUN_ON_START: 'false',
    WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.0/8',
  };
  const migrated = await run.once('migrate', ['migrate'], common, mounts);
  if (migrated.code !== 0) throw new Error(`migrate: ${migrated.stderr}`);
  const receiver = await h.startReceiver(receiverTls, { host: RECEIVER_HOST, retryForMs: 300_000 });

  // Start-up to ready: from `podman run -d` to the first 200 of /health/ready, one container at a time.
  const timeToReady = async (role, command, env, probe) => {
    const t0 = Date.now();
    const name = await run.start(role, command, env, mounts);
    await c.until(120, `${name} ready`, async () => (await probe()).status === 200);
    return { name, ms: Date.now() - t0 };
  };
  const api = await timeToReady(
    'api',
    ['api'],
    {
      ...common,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
      METRICS_PORT: String(metricsPort),
      TLS_CERT_FILE: '/run/secrets/integrations/tls.crt',
      TLS_KEY_FILE: '/run/secrets/integrations/tls.key',
      PUBLIC_BASE_URL: `https://127.0.0.1:${apiPort}`,
    },
    () => c.call({ port: apiPort, path: '/health/ready', ca: fs.readFileSync(tls.TLS_CERT_FILE) }),
  );
  const worker = await timeToReady(
    'worker',
    ['worker'],
    { ...common, WORKER_HEALTH_PORT: String(healthPort), METRICS_HOST: '127.0.0.1', NODE_EXTRA_CA_CERTS: '/run/secrets/integrations/receiver-ca.crt' },
    () => c.call({ port: healthPort, tls: false, path: '/health/ready' }),
  );
  say(`ready: api ${api.ms} ms, worker ${worker.ms} ms after podman run`);

  const adminJson = async (args) => JSON.parse(await c.podmanOk(['exec', api.name, '/app/docker/entrypoint.sh', 'admin', ...args, '--json']));
  const domain = 'containers.example';
  const org = await adminJson(['org', 'create', '--name', 'containers bench']);
  const conn = await adminJson(['connection', 'create', '--org', org.id, '--name', 'bench', '--scopes', 'all']);
  const key = await adminJson(['key', 'create', '--connection', conn.id]);
  await adminJson(['org', 'domain', org.id, 'add', domain]);

  const sampleRss = () => ({ api: c.rssMiB(api.name), worker: c.rssMiB(worker.name) });
  say('idle for 20 s…');
  await h.sleep(20_000);
  const idle = { api: await c.rssMiB(api.name), worker: await c.rssMiB(worker.name) };

  const agent = h.keepAliveAgent(32);
  const auth = { authorization: `Bearer ${key.key}` };
  const call = (method, p, json) =>
    h.request({
      port: apiPort,
      method,
      path: p,
      headers: auth,
      json,
      agent,
      contentType: json && p.startsWith('/scim') ? 'application/scim+json' : 'application/json',
    });
  const hook = await call('POST', '/v1/webhooks', { url: `https://${RECEIVER_HOST}/containers`, events: ['conversation.ended'] });
  if (hook.status !== 201) throw new Error(`webhook not created: ${hook.status} ${hook.body}`);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  say(`running ${SECONDS} s of the soak mix…`);
  let calls = 0;
  let errors = 0;
  const errorSamples = [];
  const failed = (what) => {
    errors++;
    if (errorSamples.length < 10) errorSamples.push(what);
  };
  let events = 0;
  const samples = { api: [], worker: [] };
  const pending = new Set();
  const measure = (promise, expected) => {
    const p = promise.then(
      (r) => {
        calls++;
        if (!expected.includes(r.status)) failed(`${r.status} ${r.body.toString('utf8').slice(0, 200)}`);
      },
      (err) => {
        calls++;
        failed(String(err.message || err));
      },
    );
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  const kinds = h.soakMix({
    call,
    measure,
    tag: 'bench',
    domain,
    event: () => {
      events++;
      h.insertOutboxEvent(db, org.id).catch((err) => failed(`outbox insert: ${err.message}`));
    },
  });
  const end = Date.now() + SECONDS * 1000;
  const sampler = setInterval(async () => {
    const s = sampleRss();
    samples.api.push(await s.api);
    samples.worker.push(await s.worker);
  }, 5000);
  await Promise.all(Object.entries(RATES).map(([kind, rate]) => h.steady(rate, kinds[kind], () => Date.now() >= end)));
  clearInterval(sampler);
  await Promise.allSettled([...pending]);
  let got = await receiver.stats();
  for (const until = Date.now() + 120_000; got.unique < events && Date.now() < until; await h.sleep(500)) got = await receiver.stats();
  await db.end();
  const mean = (xs) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(1);
  const report = {
    bench: 'containers',
    commit: h.gitCommit(),
    date: new Date().toISOString(),
    machine: { ...h.machine(), load_average_at_start: load },
    podman: (await c.podmanOk(['--version'])).trim(),
    image: {
      tag: image.image,
      base: image.base,
      mb: +(image.bytes / 1e6).toFixed(1),
      base_mb: +(image.baseBytes / 1e6).toFixed(1),
      added_mb: +((image.bytes - image.baseBytes) / 1e6).toFixed(1),
      build_s: +(image.buildMs / 1000).toFixed(1),
      built_now: BUILD,
      largest: sizes,
    },
    ready_ms: { api: api.ms, worker: worker.ms },
    rss_mib: {
      idle,
      under_load_mean: { api: mean(samples.api), worker: mean(samples.worker) },
      under_load_max: { api: Math.max(...samples.api), worker: Math.max(...samples.worker) },
    },
    load: { seconds: SECONDS, rates_per_s: RATES, calls, errors, error_samples: errorSamples, events, received: got.count, received_unique: got.unique },
  };
  say(writeReport('containers', report));
}

h.runMain(
  async () => {
    try {
      await main();
    } finally {
      await run?.cleanup();
    }
  },
  { tag: 'bench:containers', giveUpMinutes: 30 },
);
