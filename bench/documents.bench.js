#!/usr/bin/env node
// Two parts, in one run (BENCH_DOCS_PARTS, default "worker,upload"):
//
// worker: translation throughput: documents translated per second through the worker (BullMQ job →
// claim in Postgres → format handler → LibreTranslate adapter over HTTP → translation stored
// with its document.translated outbox row in one transaction), beside the LibreTranslate adapter
// called directly in a loop, against the same local engine stand-in (bench/translation-stand-in.js,
// its own process), at the same concurrency, in one run. Loopback only; a dedicated database it
// drops and recreates; it stops by itself and kills its child on the way out. See bench/README.md.
//
// upload: the api's memory for POST /v1/documents of a 1 MiB file (multipart): an api process of
// its own per measure (NODE_ENV=production, started, warmed up with a few uploads one at a time),
// then N uploads at once (N = 1, 8, 32), each on its own HTTPS connection; the growth of the api's
// resident memory is read from outside (/proc/<pid>/status: VmHWM, the peak, reset through
// /proc/<pid>/clear_refs just before, minus VmRSS just before), divided by N. Every upload must be
// answered 202 and stored whole (size and SHA-256 checked in Postgres). With BENCH_BASELINE_DIST set,
// that build's api is measured in the same rounds, alternating.
//
//   npm run build && node bench/documents.bench.js
//
// Env: BENCH_DIST (the build to run, default dist/), BENCH_BASELINE_DIST (upload part: another build to
// measure beside it), BENCH_UPLOAD_CONCURRENCY (default "1,8,32"), BENCH_UPLOAD_ROUNDS (default 7: a lone upload's peak depends on whether a scavenge comes during it, so it varies from round to round), BENCH_UPLOAD_BYTES (default 1 MiB), BENCH_DOCS_COUNT (documents per measure,
// default 2000), BENCH_DOCS_CONCURRENCY (comma-separated, default "4,16"; 4 is TRANSLATION_CONCURRENCY's
// default), BENCH_DATABASE_SERVER_URL, BENCH_REDIS_URL.
'use strict';
const lib = require('./lib');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { Client } = require('pg');

const { root, withDb } = lib;
const distDir = path.resolve(root, process.env.BENCH_DIST || 'dist');
const DB_NAME = 'integrations_bench_documents';
const server = process.env.BENCH_DATABASE_SERVER_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
/** What one document holds: three short lines, so one engine request per document (q of three). */
const TEXT = 'Your appointment is confirmed for Monday at ten.\nPlease bring your passport and the letter.\nCall us if you cannot come.';
const SETTINGS = {
  documents: Number(process.env.BENCH_DOCS_COUNT || 6000),
  warmup: Number(process.env.BENCH_DOCS_WARMUP || 1000),
  /** The adapter alone: warmed up this long, then measured this long, in each round (a count of calls made it a fraction of a second: the figure swung 4,000–20,000/s run to run). */
  adapter_warmup_s: Number(process.env.BENCH_ADAPTER_WARMUP || 2),
  adapter_measure_s: Number(process.env.BENCH_ADAPTER_SECONDS || 5),
  /** Per concurrency: the adapter alone and the worker in turn, this many times; medians reported. */
  rounds: Number(process.env.BENCH_DOCS_ROUNDS || 3),
  concurrencies: (process.env.BENCH_DOCS_CONCURRENCY || '4,16').split(',').map(Number),
  text_chars: TEXT.length,
  engine_requests_per_document: 1,
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchdocs',
  node_env: 'production',
  log_level: 'warn',
  parts: (process.env.BENCH_DOCS_PARTS || 'worker,upload').split(','),
};
const UPLOAD = {
  file_bytes: Number(process.env.BENCH_UPLOAD_BYTES || 1024 * 1024),
  concurrencies: (process.env.BENCH_UPLOAD_CONCURRENCY || '1,8,32').split(',').map(Number),
  rounds: Number(process.env.BENCH_UPLOAD_ROUNDS || 7),
  warmup_uploads: Number(process.env.BENCH_UPLOAD_WARMUP || 4),
  file: 'bench.txt, text/plain, UTF-8 lines of text',
  memory: 'VmHWM after (peak, reset via /proc/<pid>/clear_refs before) minus VmRSS before, of the api process',
};
/** Issue 15: under 2 MB (2,000,000 bytes) per concurrent upload, in MiB as the figures are. */
const TARGET_UPLOAD_GROWTH_MIB = 2e6 / 2 ** 20;
const HOST = '127.0.0.1';
const work = path.join(root, '.data', 'bench');
const baselineDir = process.env.BENCH_BASELINE_DIST ? path.resolve(root, process.env.BENCH_BASELINE_DIST) : null;
const say = (msg) => process.stdout.write(`[bench:documents] ${msg}\n`);
const req = (rel) => require(path.join(distDir, rel));
let standIn;

function startStandIn() {
  return new Promise((resolve, reject) => {
    standIn = lib.track(spawn(process.execPath, [path.join(__dirname, 'translation-stand-in.js')], { stdio: ['ignore', 'pipe', 'inherit'] }));
    standIn.once('error', reject);
    readline.createInterface({ input: standIn.stdout }).once('line', (line) => resolve(JSON.parse(line).port));
  });
}

/** `fn` kept `concurrency` times in flight for `seconds`; calls per second. */
async function loopFor(seconds, concurrency, fn) {
  let calls = 0;
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(seconds * 1e9));
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (process.hrtime.bigint() < until) {
        await fn();
        calls++;
      }
    }),
  );
  const took = Number(process.hrtime.bigint() - started) / 1e9;
  return { per_second: calls / took, seconds: took, calls };
}

// ---- upload: the api's memory per concurrent 1 MiB upload ----

/** kB figures of /proc/<pid>/status. */
function procStatus(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  return { rss_kb: kb('VmRSS'), hwm_kb: kb('VmHWM') };
}

/** A multipart/form-data body: the three fields, then `file` as bench.txt. */
function multipartBody(caseId, file) {
  const boundary = `----bench${Date.now().toString(16)}`;
  const field = (name, value) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const head = Buffer.from(
    field('case_id', caseId) +
      field('source_language', 'en') +
      field('target_language', 'es') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.txt"\r\nContent-Type: text/plain\r\n\r\n`,
  );
  return { body: Buffer.concat([head, file, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** UPLOAD.file_bytes (1 MiB unless BENCH_UPLOAD_BYTES says otherwise) of UTF-8 text in lines. */
function uploadFile() {
  const line = 'Your appointment is confirmed for Monday at ten. Please bring your passport and the letter.\n';
  return Buffer.from(line.repeat(Math.ceil(UPLOAD.file_bytes / line.length))).subarray(0, UPLOAD.file_bytes);
}

/** POST /v1/documents with `upload` on a connection of its own; answers the document id (fails unless 202). */
function postUpload(port, key, upload) {
  return new Promise((resolve, reject) => {
    const req = require('node:https').request(
      {
        host: HOST,
        port,
        method: 'POST',
        path: '/v1/documents',
        agent: false,
        timeout: 60_000,
        rejectUnauthorized: false,
        servername: 'localhost',
        headers: { authorization: `Bearer ${key}`, 'content-type': upload.contentType, 'content-length': upload.body.length },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          if (res.statusCode !== 202) return reject(new Error(`POST /v1/documents answered ${res.statusCode}: ${body.slice(0, 500)}`));
          resolve(JSON.parse(body).data.id);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout on POST /v1/documents')));
    req.on('error', reject);
    req.end(upload.body);
  });
}

async function measureUploads(db, baseEnv) {
  const { createHash } = require('node:crypto');
  const tls = await lib.ensureCert(work, HOST);
  const apiEnv = (extra) => ({
    PATH: process.env.PATH,
    NODE_ENV: SETTINGS.node_env,
    LOG_LEVEL: SETTINGS.log_level,
    HOST,
    DATA_DIR: work,
    DATABASE_URL: SETTINGS.database_url,
    REDIS_URL: SETTINGS.redis_url,
    REDIS_PREFIX: SETTINGS.redis_prefix,
    METRICS_PORT: '0',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '10000000',
    ...baseEnv,
    ...tls,
    ...extra,
  });
  const tenant = lib.makeTenant((args) => lib.admin(args, { dist: distDir, env: apiEnv({}) }), { org: `Bench uploads ${new Date().toISOString()}` });
  const file = uploadFile();
  const fileSha = createHash('sha256').update(file).digest('hex');
  const builds = [{ name: 'measured', dir: distDir }, ...(baselineDir ? [{ name: 'baseline', dir: baselineDir }] : [])];
  const samples = []; // {build, n, round, growth_kb, rss_before_kb, peak_kb}
  let caseId;
  const measure = async (build, n, round) => {
    const port = await lib.freePort(HOST);
    const api = lib.start(`api:${build.name}`, [path.join(build.dir, 'apps/api/src/main.js')], apiEnv({ PORT: String(port) }));
    try {
      await lib.waitReady(
        'api',
        api,
        async () => (await lib.request({ port, path: '/health/ready', timeout: 2000 }).catch(() => ({ status: 0 }))).status === 200,
      );
      if (!caseId) {
        const res = await lib.request({
          port,
          method: 'POST',
          path: '/v1/cases',
          headers: { authorization: `Bearer ${tenant.key}` },
          json: { external_ref: 'bench-uploads' },
        });
        if (res.status !== 201 && res.status !== 200) throw new Error(`POST /v1/cases answered ${res.status}: ${res.body}`);
        caseId = JSON.parse(res.body).data.id;
      }
      const upload = multipartBody(caseId, file);
      const ids = [];
      for (let i = 0; i < UPLOAD.warmup_uploads; i++) ids.push(await postUpload(port, tenant.key, upload));
      await lib.sleep(500);
      const before = procStatus(api.pid);
      fs.writeFileSync(`/proc/${api.pid}/clear_refs`, '5'); // resets VmHWM to the current RSS
      ids.push(...(await Promise.all(Array.from({ length: n }, () => postUpload(port, tenant.key, upload)))));
      const after = procStatus(api.pid);
      const growth = Math.max(0, after.hwm_kb - before.rss_kb);
      samples.push({ build: build.name, n, round, rss_before_kb: before.rss_kb, peak_kb: after.hwm_kb, growth_kb: growth });
      const stored = (
        await db.query(
          `SELECT count(*)::int AS n FROM documents WHERE id = ANY($1::bigint[]) AND original_bytes = $2 AND original_sha256 = $3 AND sha256(original) = decode($3, 'hex')`,
          [ids, file.length, fileSha],
        )
      ).rows[0].n;
      if (stored !== ids.length) throw new Error(`${build.name}: ${stored} of ${ids.length} uploads stored whole`);
      say(
        `upload ${build.name} round ${round} N=${n}: RSS ${Math.round(before.rss_kb / 1024)} MiB before, peak ${Math.round(after.hwm_kb / 1024)} MiB: ${(growth / 1024 / n).toFixed(2)} MiB per upload`,
      );
    } finally {
      await lib.stop(api);
    }
  };
  for (let round = 1; round <= UPLOAD.rounds; round++) {
    for (const n of UPLOAD.concurrencies) {
      const order = round % 2 ? builds : [...builds].reverse();
      for (const build of order) await measure(build, n, round);
    }
  }
  const median = (xs) =>
    lib.quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  const results = [];
  for (const build of builds) {
    for (const n of UPLOAD.concurrencies) {
      const mine = samples.filter((x) => x.build === build.name && x.n === n);
      const perUpload = mine.map((x) => x.growth_kb / 1024 / n);
      results.push({
        build: build.name,
        concurrent_uploads: n,
        growth_mib_median: +(median(mine.map((x) => x.growth_kb)) / 1024).toFixed(1),
        per_upload_mib_median: +median(perUpload).toFixed(2),
        per_upload_mib_max: +Math.max(...perUpload).toFixed(2),
        rss_before_mib_median: Math.round(median(mine.map((x) => x.rss_before_kb)) / 1024),
      });
    }
  }
  return {
    settings: { ...UPLOAD, builds: Object.fromEntries(builds.map((b) => [b.name, b.dir.startsWith(root) ? path.relative(root, b.dir) || '.' : b.dir])) },
    samples,
    results,
  };
}

// ---- worker: documents per second through the worker beside the adapter alone ----

async function measureWorker(db, env, engineUrl, org, caseId) {
  require('reflect-metadata');
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { WorkerModule } = req('apps/worker/src/worker.module');
  const { TranslationProcessor } = req('apps/worker/src/processors/translation.processor');
  const { LibreTranslateEngine, TranslationQueue } = req('libs/domain/src/documents');
  const { TRANSLATION_JOBS } = req('libs/queue/src');
  const insertDocuments = async (n) =>
    (
      await db.query(
        `INSERT INTO documents (organisation_id, case_id, source_language, target_language, media_type, format, original, original_bytes, original_sha256)
         SELECT $1, $2, 'en', 'es', 'text/plain', 'text', $3, $4, repeat('0', 64) FROM generate_series(1, $5) RETURNING id, created_at`,
        [org, caseId, Buffer.from(TEXT), Buffer.byteLength(TEXT), n],
      )
    ).rows.map((r) => ({ id: String(r.id), createdAt: r.created_at }));

  const adapter = new LibreTranslateEngine({ url: engineUrl });
  const lines = TEXT.split('\n');
  const results = [];
  for (const concurrency of SETTINGS.concurrencies) {
    // The adapter alone: what the engine and HTTP allow at this concurrency (measured in each round below, beside the worker).
    const cpuParts = { bench: 'self', engine: standIn.pid };
    const alone = async () => {
      await loopFor(SETTINGS.adapter_warmup_s, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));
      const cpuBefore = lib.machineCpu(cpuParts);
      const measured = await loopFor(SETTINGS.adapter_measure_s, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));
      return { ...measured, machine_cpu_ms: lib.cpuPerItem(cpuBefore, lib.machineCpu(cpuParts), measured.calls, measured.seconds) };
    };

    // The worker: documents already in Postgres, jobs queued while the worker is paused, then let go.
    const config = env({ TRANSLATION_CONCURRENCY: String(concurrency) });
    class BenchWorkerModule {}
    // WorkerModule wires the documents side itself (DocumentsWorkerModule): importing that again made a
    // second translation worker that the pause and the counting below did not see, and the run hung.
    Module({ imports: [WorkerModule.forRoot(config)] })(BenchWorkerModule);
    const ctx = await NestFactory.createApplicationContext(BenchWorkerModule, { logger: ['error', 'warn'] });
    await ctx.init();
    const worker = ctx.get(TranslationProcessor).worker;
    const queue = ctx.get(TranslationQueue);
    const through = async (n) => {
      // What autovacuum would have done since the last measure (this machine's Postgres may run with it off).
      for (const table of ['documents', 'outbox_events']) await db.query(`VACUUM ANALYZE ${table}`);
      const docs = await insertDocuments(n);
      const ids = docs.map((d) => d.id);
      const batch = new Set(ids);
      // Counted from the worker's own events (polling Postgres would compete with what is measured),
      // listening before anything is queued: a worker may take one job while it is being paused.
      let finished = 0;
      let onDone;
      const allDone = new Promise((resolve) => (onDone = resolve));
      const count = (job) => job?.name === TRANSLATION_JOBS.translate && batch.has(job.data.documentId) && ++finished === n && onDone();
      worker.on('completed', count);
      worker.on('failed', count);
      await worker.pause(true);
      for (const doc of docs) await queue.enqueue(doc);
      const cpuBefore = lib.machineCpu(cpuParts);
      const started = process.hrtime.bigint();
      await worker.resume();
      await allDone;
      // The machine's CPU over the measure, by process: the worker runs in this one (`bench`).
      const cpuAfter = lib.machineCpu(cpuParts);
      worker.off('completed', count);
      worker.off('failed', count);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const failed = (await db.query(`SELECT count(*)::int AS n FROM documents WHERE id = ANY($1::bigint[]) AND state = 'failed'`, [ids])).rows[0].n;
      if (failed > 0) throw new Error(`${failed} documents failed during the measure`);
      const translated = (await db.query(`SELECT count(*)::int AS n FROM documents WHERE id = ANY($1::bigint[]) AND state = 'translated'`, [ids])).rows[0].n;
      if (translated !== n) throw new Error(`${translated} of ${n} documents translated`);
      const events = (
        await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE event = 'document.translated' AND data->>'document_id' = ANY($1::text[])`, [ids])
      ).rows[0].n;
      if (events !== n) throw new Error(`${events} document.translated events for ${n} documents`);
      return { per_second: n / seconds, seconds, machine_cpu_ms: lib.cpuPerItem(cpuBefore, cpuAfter, n, seconds) };
    };
    await through(SETTINGS.warmup);
    const rounds = [];
    for (let round = 1; round <= SETTINGS.rounds; round++) {
      // Each round in the other order, so neither side always follows the other.
      const pair = round % 2 ? [await alone(), await through(SETTINGS.documents)] : [await through(SETTINGS.documents), await alone()].reverse();
      const [direct, viaWorker] = pair;
      rounds.push({
        adapter: direct.per_second,
        worker: viaWorker.per_second,
        ratio: viaWorker.per_second / direct.per_second,
        adapter_machine_cpu_ms: direct.machine_cpu_ms,
        worker_machine_cpu_ms: viaWorker.machine_cpu_ms,
        cost_ratio: direct.machine_cpu_ms.total / viaWorker.machine_cpu_ms.total,
      });
      say(
        `concurrency ${concurrency}, round ${round}: adapter ${Math.round(direct.per_second)} calls/s (machine CPU ${direct.machine_cpu_ms.total} ms a call, ${direct.machine_cpu_ms.cores_busy} cores busy), ` +
          `worker ${Math.round(viaWorker.per_second)} documents/s (${viaWorker.machine_cpu_ms.total} ms a document, ${viaWorker.machine_cpu_ms.cores_busy} cores busy)`,
      );
    }
    await ctx.close();
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const midRound = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
    results.push({
      concurrency,
      cost_ratio: Math.round(med(rounds.map((r) => r.cost_ratio)) * 100) / 100,
      cost_ratio_range: [Math.min(...rounds.map((r) => r.cost_ratio)), Math.max(...rounds.map((r) => r.cost_ratio))].map((x) => Math.round(x * 100) / 100),
      machine_cpu_ms: { adapter: midRound.adapter_machine_cpu_ms, worker: midRound.worker_machine_cpu_ms },
      adapter_calls_per_second: Math.round(med(rounds.map((r) => r.adapter))),
      worker_jobs_per_second: Math.round(med(rounds.map((r) => r.worker))),
      worker_vs_adapter: Math.round(med(rounds.map((r) => r.ratio)) * 100) / 100,
      worker_vs_adapter_range: [Math.min(...rounds.map((r) => r.ratio)), Math.max(...rounds.map((r) => r.ratio))].map((x) => Math.round(x * 100) / 100),
      rounds,
    });
  }
  return results;
}

async function main() {
  for (const dir of [distDir, baselineDir].filter(Boolean)) {
    for (const rel of ['apps/worker/src/worker.module.js', 'apps/api/src/main.js']) {
      if (!fs.existsSync(path.join(dir, rel))) throw new Error(`${path.join(dir, rel)} is missing: run npm run build first (or point BENCH_DIST at a build)`);
    }
  }
  require('reflect-metadata');
  const { DataSource } = require('typeorm');
  const { AppConfig } = req('libs/config/src');
  const { dataSourceOptions } = req('libs/database/src');

  const port = await startStandIn();
  const engineUrl = `http://127.0.0.1:${port}`;
  say(`engine stand-in on ${engineUrl}; database ${DB_NAME} recreated`);
  await lib.recreateDatabase(server, DB_NAME);
  const engineEnv = { TRANSLATION_ENGINE: 'libretranslate', TRANSLATION_ENGINE_URL: engineUrl };
  const env = (extra) =>
    AppConfig.fromEnv({
      NODE_ENV: SETTINGS.node_env,
      LOG_LEVEL: SETTINGS.log_level,
      DATABASE_URL: SETTINGS.database_url,
      REDIS_URL: SETTINGS.redis_url,
      REDIS_PREFIX: SETTINGS.redis_prefix,
      ...engineEnv,
      WORKER_HEALTH_PORT: '0',
      ...extra,
    });
  // Jobs of an earlier run (kept an hour after completion) go with the database they belonged to.
  const { Queue } = require('bullmq');
  const { bullConnection, bullPrefix, QUEUES } = req('libs/queue/src');
  const redisSettings = AppConfig.fromEnv({ REDIS_URL: SETTINGS.redis_url }).redis;
  const old = new Queue(QUEUES.translations, { connection: bullConnection(redisSettings), prefix: bullPrefix(SETTINGS.redis_prefix) });
  await old.obliterate({ force: true });
  await old.close();
  const migrate = new DataSource(dataSourceOptions(env({}), 'bench-migrate'));
  await migrate.initialize();
  await migrate.runMigrations();
  await migrate.destroy();

  const db = new Client({ connectionString: SETTINGS.database_url });
  await db.connect();
  const [{ id: org }] = (await db.query(`INSERT INTO organisations (name) VALUES ('Bench documents') RETURNING id`)).rows;
  const [{ id: caseId }] = (await db.query(`INSERT INTO cases (organisation_id, external_ref) VALUES ($1, 'bench') RETURNING id`, [org])).rows;

  const loadBefore = os.loadavg()[0];
  // The worker part first: the uploads stay awaiting the queue (no worker runs beside the api), and would otherwise be translated in the worker's measure.
  const results = SETTINGS.parts.includes('worker') ? await measureWorker(db, env, engineUrl, org, caseId) : [];
  const loadBetween = os.loadavg()[0];
  const upload = SETTINGS.parts.includes('upload') ? await measureUploads(db, engineEnv) : null;
  const loadAfter = os.loadavg()[0];
  await db.end();

  const commit = lib.gitCommit() ?? 'unknown';
  const run = {
    at: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}`,
    node: process.version,
    commit,
    load_average_before: Math.round(loadBefore * 100) / 100,
    load_average_between: Math.round(loadBetween * 100) / 100,
    load_average_after: Math.round(loadAfter * 100) / 100,
    settings: SETTINGS,
    results,
    upload,
  };
  const md = [
    `Run ${run.at} on ${run.machine}, node ${run.node}, commit ${run.commit}, load average ${run.load_average_before} before, ${run.load_average_between} after the worker part, ${run.load_average_after} at the end.`,
    '',
    ...(results.length
      ? [
          '### Through the worker',
          '',
          `${SETTINGS.documents} documents per worker measure (after ${SETTINGS.warmup} to warm up), ${SETTINGS.text_chars} characters in three lines each: one LibreTranslate request (q of three) per document. The adapter alone: warmed up ${SETTINGS.adapter_warmup_s} s, measured ${SETTINGS.adapter_measure_s} s. ${SETTINGS.rounds} rounds per concurrency, the adapter and the worker in turn (the order flipped each round); medians, and the range of the rounds' ratios.`,
          'Engine: bench/translation-stand-in.js (node:http, its own process). Worker: NODE_ENV=production, LOG_LEVEL=warn, local Postgres and Redis; jobs queued while it was paused, timed from resume to the last document translated.',
          '',
          '| concurrency | adapter alone (calls/s) | through the worker (documents/s) | worker / adapter | range over the rounds |',
          '|---:|---:|---:|---:|---:|',
          ...results.map(
            (r) =>
              `| ${r.concurrency} | ${r.adapter_calls_per_second} | ${r.worker_jobs_per_second} | ${r.worker_vs_adapter} | ${r.worker_vs_adapter_range.join('–')} |`,
          ),
          '',
          `The machine's CPU per document (per call for the adapter alone) over each measure, by process (read from /proc; the worker runs in the bench's own process; Postgres and Redis are every process of the local servers), in the round of median ratio. ${os.cpus().length} cores: a setup that keeps them all busy makes cores ÷ CPU per item, so adapter ÷ worker CPU per item is the ratio the worker would reach if both kept the machine busy — the most it can reach on a machine where all of these share the cores:`,
          '',
          ...results.map((r) => {
            const parts = (by) =>
              Object.entries(by)
                .filter(([, v]) => v >= 0.001)
                .map(([k, v]) => `${k} ${v}`)
                .join(', ');
            const m = r.machine_cpu_ms;
            return (
              `- concurrency ${r.concurrency}: worker **${m.worker.total} ms** per document (${parts(m.worker.by)}), ${m.worker.cores_busy} cores busy; adapter alone **${m.adapter.total} ms** per call (${parts(m.adapter.by)}), ${m.adapter.cores_busy} cores busy; ` +
              `adapter ÷ worker = **${r.cost_ratio}** (${r.cost_ratio_range.join('–')} over the rounds), beside the ${r.worker_vs_adapter} it made.`
            );
          }),
          '',
          ...results
            .filter((r) => r.concurrency === 16)
            .map(
              (r) =>
                `Target (the worker ≥ 0.5 of the adapter alone at concurrency 16, median of the rounds): ${r.worker_vs_adapter >= 0.5 ? 'met' : '**not met**'}.`,
            ),
          '',
        ]
      : []),
    ...(upload
      ? [
          "### The api's memory per concurrent 1 MiB upload (`POST /v1/documents`, multipart)",
          '',
          `A fresh api process per measure (NODE_ENV=production), warmed up with ${UPLOAD.warmup_uploads} uploads one at a time, then N uploads at once, each on its own connection; growth = the api's peak RSS during them (VmHWM) minus its RSS just before; ${UPLOAD.rounds} rounds${baselineDir ? `, the baseline build (${upload.settings.builds.baseline}) alternating with the measured one` : ''}. Every upload answered 202 and was stored whole (size and SHA-256 checked).`,
          '',
          '| build | N at once | growth (MiB, median) | per upload (MiB, median) | per upload (MiB, worst round) | RSS before (MiB) |',
          '|---|---:|---:|---:|---:|---:|',
          ...upload.results.map(
            (r) =>
              `| ${r.build} | ${r.concurrent_uploads} | ${r.growth_mib_median} | ${r.per_upload_mib_median} | ${r.per_upload_mib_max} | ${r.rss_before_mib_median} |`,
          ),
          '',
          `Target (growth under 2 MB, ${TARGET_UPLOAD_GROWTH_MIB.toFixed(2)} MiB, per concurrent upload, measured build, every N, median): **${
            upload.results.filter((r) => r.build === 'measured').every((r) => r.per_upload_mib_median < TARGET_UPLOAD_GROWTH_MIB) ? 'met' : 'not met'
          }**.`,
          '',
        ]
      : []),
  ].join('\n');
  lib.writeResults('documents', run, md);
  say(`written to bench/results/documents.{json,md}\n${md}`);
}

// The in-process worker's last handles need not hold the process open once the figures are written.
lib.runMain(() => main().then(() => lib.stopAll().then(() => process.exit(0))), { tag: 'bench:documents', giveUpMinutes: 30 });
