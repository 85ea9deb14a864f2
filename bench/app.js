#!/usr/bin/env node
// The built api or worker of BENCH_DIST (default dist/) as a bench's child process, built from the
// same modules as apps/*/src/main.js, where a bench needs a hand inside the process:
//   node bench/app.js api      the api on HOST:PORT; with BENCH_TRACE_PORT, bench/scim-trace.js's
//                              instruments and their control server on that port
//   node bench/app.js worker   the worker with the webhook modules, stopped cleanly on SIGTERM
'use strict';
require('reflect-metadata');
const path = require('node:path');
const { built, distFrom } = require('./harness/built');

const code = built(distFrom());

async function api() {
  const trace = process.env.BENCH_TRACE_PORT ? require('./scim-trace').install(code) : null;
  const config = code.AppConfig.fromEnv();
  const app = await code.createApiApp(config, []);
  await app.listen(config.port, config.host);
  if (trace) await trace.attach(app.getHttpServer(), Number(process.env.BENCH_TRACE_PORT));
  process.stdout.write(`bench api listening on https://${config.host}:${config.port}\n`);
}

async function worker() {
  const { Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { Logger } = require('nestjs-pino');
  class BenchWorker {}
  Module({ imports: [code.WorkerModule.forRoot(), code.WebhooksModule, code.WebhooksWorkerModule] })(BenchWorker);
  const app = await NestFactory.createApplicationContext(BenchWorker, { bufferLogs: true });
  app.useLogger(app.get(Logger));
  code.installGracefulShutdown(app, app.get(Logger), 25_000, 'worker');
}

const kind = process.argv[2];
const main = { api, worker }[kind];
if (!main) {
  process.stderr.write(`usage: node ${path.relative(process.cwd(), __filename)} api|worker\n`);
  process.exit(2);
}
main().catch((err) => {
  process.stderr.write(`bench ${kind} failed to start: ${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
