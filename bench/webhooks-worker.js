#!/usr/bin/env node
// The worker as the benchmark runs it: the built WorkerModule plus the webhook modules (added here
// the way worker.module will import them once wired), with a clean SIGTERM like apps/worker's main.
'use strict';
require('reflect-metadata');
const path = require('node:path');
const dist = process.env.BENCH_DIST_DIR || path.resolve(__dirname, '..', 'dist');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { Logger } = require('nestjs-pino');
const { WorkerModule } = require(`${dist}/apps/worker/src/worker.module`);
const { WebhooksWorkerModule } = require(`${dist}/apps/worker/src/webhooks/webhooks-worker.module`);
const { WebhooksDomainModule } = require(`${dist}/libs/domain/src/webhooks`);
const { installGracefulShutdown } = require(`${dist}/libs/logging/src`);

class BenchWorker {}
Module({ imports: [WorkerModule.forRoot(), WebhooksDomainModule, WebhooksWorkerModule] })(BenchWorker);
NestFactory.createApplicationContext(BenchWorker, { bufferLogs: true }).then(
  (app) => {
    app.useLogger(app.get(Logger));
    installGracefulShutdown(app, app.get(Logger), 25_000, 'worker');
  },
  (err) => {
    process.stderr.write(`worker failed to start: ${err && err.stack ? err.stack : err}\n`);
    process.exit(1);
  },
);
