#!/usr/bin/env node
// Translation throughput: documents translated per second through the worker (BullMQ job →
// claim in Postgres → format handler → LibreTranslate adapter over HTTP → translation stored
// with its document.translated outbox row in one transaction), beside the LibreTranslate adapter
// called directly in a loop, against the same local engine stand-in (bench/translation-stand-in.js,
// its own process), at the same concurrency, in one run. Loopback only; a dedicated database it
// drops and recreates; it stops by itself and kills its child on the way out. See bench/README.md.
//
//   npm run build && node bench/documents.bench.js
//
// Env: BENCH_DIST (the build to run, default dist/), BENCH_DOCS_COUNT (documents per measure,
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
  documents: Number(process.env.BENCH_DOCS_COUNT || 2000),
  warmup: Number(process.env.BENCH_DOCS_WARMUP || 200),
  concurrencies: (process.env.BENCH_DOCS_CONCURRENCY || '4,16').split(',').map(Number),
  text_chars: TEXT.length,
  engine_requests_per_document: 1,
  database_url: withDb(server, DB_NAME),
  redis_url: process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
  redis_prefix: 'iabenchdocs',
  node_env: 'production',
  log_level: 'warn',
};
const say = (msg) => process.stdout.write(`[bench:documents] ${msg}\n`);
const req = (rel) => require(path.join(distDir, rel));
let standIn;

function startStandIn() {
  return new Promise((resolve, reject) => {
    standIn = spawn(process.execPath, [path.join(__dirname, 'translation-stand-in.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
    standIn.once('error', reject);
    readline.createInterface({ input: standIn.stdout }).once('line', (line) => resolve(JSON.parse(line).port));
  });
}

/** Runs `total` calls of `fn` with `concurrency` in flight; answers calls per second. */
async function loop(total, concurrency, fn) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await fn();
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { per_second: total / seconds, seconds };
}

async function main() {
  for (const rel of ['apps/worker/src/worker.module.js']) {
    if (!fs.existsSync(path.join(distDir, rel)))
      throw new Error(`${path.join(distDir, rel)} is missing: run npm run build first (or point BENCH_DIST at a build)`);
  }
  require('reflect-metadata');
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { DataSource } = require('typeorm');
  const { AppConfig } = req('libs/config/src');
  const { dataSourceOptions } = req('libs/database/src');
  const { WorkerModule } = req('apps/worker/src/worker.module');
  const { TranslationProcessor } = req('apps/worker/src/processors/translation.processor');
  const { LibreTranslateEngine, TRANSLATION_JOBS, TranslationQueue } = req('libs/domain/src/documents');

  const port = await startStandIn();
  const engineUrl = `http://127.0.0.1:${port}`;
  say(`engine stand-in on ${engineUrl}; database ${DB_NAME} recreated`);
  await lib.recreateDatabase(server, DB_NAME);
  const env = (extra) =>
    AppConfig.fromEnv({
      NODE_ENV: SETTINGS.node_env,
      LOG_LEVEL: SETTINGS.log_level,
      DATABASE_URL: SETTINGS.database_url,
      REDIS_URL: SETTINGS.redis_url,
      REDIS_PREFIX: SETTINGS.redis_prefix,
      TRANSLATION_ENGINE: 'libretranslate',
      TRANSLATION_ENGINE_URL: engineUrl,
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
  const loadBefore = os.loadavg()[0];
  for (const concurrency of SETTINGS.concurrencies) {
    // The adapter alone: what the engine and HTTP allow at this concurrency.
    await loop(SETTINGS.warmup, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));
    const direct = await loop(SETTINGS.documents, concurrency, () => adapter.translate(lines, { source: 'en', target: 'es' }));

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
      const started = process.hrtime.bigint();
      await worker.resume();
      await allDone;
      worker.off('completed', count);
      worker.off('failed', count);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const failed = (await db.query(`SELECT count(*)::int AS n FROM documents WHERE id = ANY($1::bigint[]) AND state = 'failed'`, [ids])).rows[0].n;
      if (failed > 0) throw new Error(`${failed} documents failed during the measure`);
      const events = (
        await db.query(`SELECT count(*)::int AS n FROM outbox_events WHERE event = 'document.translated' AND data->>'document_id' = ANY($1::text[])`, [ids])
      ).rows[0].n;
      if (events !== n) throw new Error(`${events} document.translated events for ${n} documents`);
      return { per_second: n / seconds, seconds };
    };
    await through(SETTINGS.warmup);
    const viaWorker = await through(SETTINGS.documents);
    await ctx.close();
    results.push({
      concurrency,
      adapter_calls_per_second: Math.round(direct.per_second),
      worker_jobs_per_second: Math.round(viaWorker.per_second),
      worker_vs_adapter: Math.round((viaWorker.per_second / direct.per_second) * 100) / 100,
      adapter_seconds: Math.round(direct.seconds * 100) / 100,
      worker_seconds: Math.round(viaWorker.seconds * 100) / 100,
    });
    say(`concurrency ${concurrency}: adapter ${Math.round(direct.per_second)} calls/s, worker ${Math.round(viaWorker.per_second)} documents/s`);
  }
  await db.end();

  const commit = lib.gitCommit() ?? 'unknown';
  const run = {
    at: new Date().toISOString(),
    machine: `${os.cpus().length} × ${os.cpus()[0]?.model.trim()}`,
    node: process.version,
    commit,
    load_average_before: Math.round(loadBefore * 100) / 100,
    settings: SETTINGS,
    results,
  };
  const md = [
    `Run ${run.at} on ${run.machine}, node ${run.node}, commit ${run.commit}, load average before ${run.load_average_before}.`,
    `${SETTINGS.documents} documents per measure (after ${SETTINGS.warmup} to warm up), ${SETTINGS.text_chars} characters in three lines each: one LibreTranslate request (q of three) per document.`,
    'Engine: bench/translation-stand-in.js (node:http, its own process). Worker: NODE_ENV=production, LOG_LEVEL=warn, local Postgres and Redis; jobs queued while it was paused, timed from resume to the last document translated.',
    '',
    '| concurrency | adapter alone (calls/s) | through the worker (documents/s) | worker / adapter |',
    '|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.concurrency} | ${r.adapter_calls_per_second} | ${r.worker_jobs_per_second} | ${r.worker_vs_adapter} |`),
    '',
  ].join('\n');
  lib.writeResults('documents', run, md);
  say(`written to bench/results/documents.{json,md}\n${md}`);
}

main()
  .then(() => {
    standIn?.kill('SIGTERM');
    process.exit(0);
  })
  .catch((err) => {
    process.stderr.write(`[bench:documents] failed: ${err.stack || err}\n`);
    standIn?.kill('SIGTERM');
    process.exit(1);
  });
