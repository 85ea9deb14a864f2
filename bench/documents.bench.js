#!/usr/bin/env node
// Two parts, in one run (BENCH_DOCS_PARTS, default "worker,upload"):
// - worker: documents translated per second through the worker (BullMQ job → claim in Postgres →
//   format handler → LibreTranslate adapter over HTTP → translation stored with its
//   document.translated outbox row), beside the LibreTranslate adapter called directly in a loop,
//   against the same local engine stand-in (bench/translation-stand-in.js) at the same concurrency,
//   in alternating rounds; with the machine's CPU per document and per call by process (/proc). The
//   worker runs in this process: the jobs are queued while it is paused, then timed from resume to
//   the last document translated.
// - upload: the api's memory for POST /v1/documents of a 1 MiB file (multipart): a fresh api process
//   per measure, warmed up with a few uploads one at a time, then N uploads at once (N = 1, 8, 32),
//   each on its own HTTPS connection; its peak resident memory during them (VmHWM, reset just
//   before) minus its RSS just before, divided by N. Every upload must be answered 202 and stored
//   whole (size and SHA-256 checked). With BENCH_BASELINE_DIST, that build's api in the same rounds.
//   npm run build && node bench/documents.bench.js
'use strict';
const { Client } = require('pg');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');

const distDir = h.distFrom();
const code = h.built(distDir);
const DB_NAME = 'integrations_bench_documents';
/** What one document holds: three short lines, so one engine request per document (q of three). */
const TEXT = 'Your appointment is confirmed for Monday at ten.\nPlease bring your passport and the letter.\nCall us if you cannot come.';
const SETTINGS = {
  documents: Number(process.env.BENCH_DOCS_COUNT || 6000),
  warmup: Number(process.env.BENCH_DOCS_WARMUP || 1000),
  /** The adapter alone: warmed up this long, then measured this long, in each round. */
  adapter_warmup_s: Number(process.env.BENCH_ADAPTER_WARMUP || 2),
  adapter_measure_s: Number(process.env.BENCH_ADAPTER_SECONDS || 5),
  /** Per concurrency: the adapter alone and the worker in turn, this many times; medians reported. */
  rounds: Number(process.env.BENCH_DOCS_ROUNDS || 3),
  concurrencies: (process.env.BENCH_DOCS_CONCURRENCY || '4,16').split(',').map(Number),
  text_chars: TEXT.length,
  engine_requests_per_document: 1,
  database_url: h.databaseUrl(DB_NAME),
  redis_url: h.redisUrl(),
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
const work = h.workDir('bench');
const baselineDir = process.env.BENCH_BASELINE_DIST ? h.distFrom('BENCH_BASELINE_DIST') : null;
const say = h.sayer('bench:documents');

// ---- upload: the api's memory per concurrent 1 MiB upload ----

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
async function postUpload(port, key, upload) {
  const res = await h.request({
    port,
    method: 'POST',
    path: '/v1/documents',
    agent: false,
    timeout: 60_000,
    headers: { authorization: `Bearer ${key}` },
    body: upload.body,
    contentType: upload.contentType,
  });
  const body = res.body.toString();
  if (res.status !== 202) throw new Error(`POST /v1/documents answered ${res.status}: ${body.slice(0, 500)}`);
  return JSON.parse(body).data.id;
}

async function measureUploads(db, engineEnv) {
  const { createHash } = require('node:crypto');
  const tls = await h.ensureCert(work);
  const apiEnv = h.appEnv(SETTINGS, { dataDir: work, clean: true }, { METRICS_PORT: '0', ...h.UNLIMITED, ...engineEnv, ...tls });
  const tenant = h.makeTenant((args) => h.admin(args, { dist: distDir, env: apiEnv }), { org: `Bench uploads ${new Date().toISOString()}` });
  const file = uploadFile();
  const fileSha = createHash('sha256').update(file).digest('hex');
  const builds = [{ name: 'measured', dir: distDir }, ...(baselineDir ? [{ name: 'baseline', dir: baselineDir }] : [])];
  const samples = []; // {build, n, round, growth_kb, rss_before_kb, peak_kb}
  let caseId;
  const measure = async (build, n, round) => {
    const { proc: api, port } = await h.startApi(`api:${build.name}`, { dist: build.dir, env: apiEnv });
    try {
      if (!caseId) {
        const res = await h.request({
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
      await h.sleep(500);
      const before = h.memoryKb(api.pid);
      h.resetPeakMemory(api.pid);
      ids.push(...(await Promise.all(Array.from({ length: n }, () => postUpload(port, tenant.key, upload)))));
      const after = h.memoryKb(api.pid);
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
      await h.stop(api);
    }
  };
  for (let round = 1; round <= UPLOAD.rounds; round++) {
    for (const n of UPLOAD.concurrencies) {
      for (const build of h.alternated(builds, round)) await measure(build, n, round);
    }
  }
  const median = h.lowerMedian;
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
    settings: { ...UPLOAD, builds: Object.fromEntries(builds.map((b) => [b.name, b.dir.startsWith(h.root) ? path.relative(h.root, b.dir) || '.' : b.dir])) },
    samples,
    results,
  };
}

// ---- worker: documents per second through the worker beside the adapter alone ----

async function measureWorker(db, env, engine, org, caseId) {
  require('reflect-metadata');
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { WorkerModule, TranslationProcessor, LibreTranslateEngine, TranslationQueue, TRANSLATION_JOBS } = code;
  const insertDocuments = async (n) =>
    (
      await db.query(
        `INSERT INTO documents (organisation_id, case_id, source_language, target_language, media_type, format, original, original_bytes, original_sha256)
         SELECT $1, $2, 'en', 'es', 'text/plain', 'text', $3, $4, repeat('0', 64) FROM generate_series(1, $5) RETURNING id, created_at`,
        [org, caseId, Buffer.from(TEXT), Buffer.byteLength(TEXT), n],
      )
    ).rows.map((r) => ({ id: String(r.id), createdAt: r.created_at }));

  const adapter = new LibreTranslateEngine({ url: engine.url });
  const lines = TEXT.split('\n');
  const results = [];
  for (const concurrency of SETTINGS.concurrencies) {
    // The adapter alone: what the engine and HTTP allow at this concurrency (measured in each round below, beside the worker).
    const cpuParts = { bench: 'self', engine: engine.proc.pid };
    const alone = async () => {
      await h.loopFor(SETTINGS.adapter_warmup_s, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));
      const cpuBefore = h.machineCpu(cpuParts);
      const measured = await h.loopFor(SETTINGS.adapter_measure_s, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));
      return { ...measured, machine_cpu_ms: h.cpuPerItem(cpuBefore, h.machineCpu(cpuParts), measured.calls, measured.seconds) };
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
      const cpuBefore = h.machineCpu(cpuParts);
      const started = process.hrtime.bigint();
      await worker.resume();
      await allDone;
      // The machine's CPU over the measure, by process: the worker runs in this one (`bench`).
      const cpuAfter = h.machineCpu(cpuParts);
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
      return { per_second: n / seconds, seconds, machine_cpu_ms: h.cpuPerItem(cpuBefore, cpuAfter, n, seconds) };
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
    const midRound = [...rounds].sort((a, b) => a.ratio - b.ratio)[Math.floor(rounds.length / 2)];
    results.push({
      concurrency,
      cost_ratio: Math.round(h.upperMedian(rounds.map((r) => r.cost_ratio)) * 100) / 100,
      cost_ratio_range: [Math.min(...rounds.map((r) => r.cost_ratio)), Math.max(...rounds.map((r) => r.cost_ratio))].map((x) => Math.round(x * 100) / 100),
      machine_cpu_ms: { adapter: midRound.adapter_machine_cpu_ms, worker: midRound.worker_machine_cpu_ms },
      adapter_calls_per_second: Math.round(h.upperMedian(rounds.map((r) => r.adapter))),
      worker_jobs_per_second: Math.round(h.upperMedian(rounds.map((r) => r.worker))),
      worker_vs_adapter: Math.round(h.upperMedian(rounds.map((r) => r.ratio)) * 100) / 100,
      worker_vs_adapter_range: [Math.min(...rounds.map((r) => r.ratio)), Math.max(...rounds.map((r) => r.ratio))].map((x) => Math.round(x * 100) / 100),
      rounds,
    });
  }
  return results;
}

async function main() {
  h.requireBuilds([distDir, baselineDir], ['WorkerModule', 'api']);
  require('reflect-metadata');
  const { DataSource } = require('typeorm');
  const { AppConfig, dataSourceOptions, bullConnection, bullPrefix, QUEUES } = code;

  const engine = await h.startTranslationStandIn();
  say(`engine stand-in on ${engine.url}; database ${DB_NAME} recreated`);
  await h.recreateDatabase(SETTINGS.database_url);
  const engineEnv = { TRANSLATION_ENGINE: 'libretranslate', TRANSLATION_ENGINE_URL: engine.url };
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
  const results = SETTINGS.parts.includes('worker') ? await measureWorker(db, env, engine, org, caseId) : [];
  const loadBetween = os.loadavg()[0];
  const upload = SETTINGS.parts.includes('upload') ? await measureUploads(db, engineEnv) : null;
  const loadAfter = os.loadavg()[0];
  await db.end();

  const commit = h.gitCommit() ?? 'unknown';
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
  say(writeReport('documents', run));
}

// The in-process worker's last handles need not hold the process open once the figures are written.
h.runMain(main, { tag: 'bench:documents', giveUpMinutes: 30, exit: true });
