#!/usr/bin/env node
// The two references that bench/me.bench.js measures beside the api, each in its own process
// (as the api is) so that none shares a thread with the load generator:
//   node bench/reference-servers.js bare-node|bare-nest
// Env: PORT; TLS_CERT_FILE and TLS_KEY_FILE (the api's certificate); BODY_FILE (the exact bytes
// the api answered for GET /v1/me). Both listen on 127.0.0.1 only and answer GET /v1/me with
// that body, ignoring the key: what is left to measure is TLS, HTTP and the framework.
'use strict';
const fs = require('node:fs');
const https = require('node:https');

const port = Number(process.env.PORT);
const tls = { cert: fs.readFileSync(process.env.TLS_CERT_FILE), key: fs.readFileSync(process.env.TLS_KEY_FILE) };
const body = fs.readFileSync(process.env.BODY_FILE);

/** The physical limit: node:https writing a prepared buffer. */
function bareNode() {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
  const server = https.createServer(tls, (req, res) => {
    if (req.method === 'GET' && req.url === '/v1/me') res.writeHead(200, headers).end(body);
    else res.writeHead(404).end();
  });
  server.listen(port, '127.0.0.1');
}

/** The framework's ceiling: NestJS 11 on platform-express, one controller, no guard, no logger. */
async function bareNest() {
  require('reflect-metadata');
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const payload = JSON.parse(body.toString('utf8'));

  class MeController {
    me() {
      return payload;
    }
  }
  Controller('v1/me')(MeController);
  Get()(MeController.prototype, 'me', Object.getOwnPropertyDescriptor(MeController.prototype, 'me'));
  class BenchModule {}
  Module({ controllers: [MeController] })(BenchModule);

  const app = await NestFactory.create(BenchModule, { httpsOptions: tls, logger: ['error', 'warn'] });
  // The same two express settings the api makes (apps/api/src/bootstrap.ts).
  app.disable('x-powered-by');
  app.set('etag', false);
  await app.listen(port, '127.0.0.1');
}

const kind = process.argv[2];
if (kind === 'bare-node') bareNode();
else if (kind === 'bare-nest')
  bareNest().catch((err) => {
    process.stderr.write(`${err.stack}\n`);
    process.exit(1);
  });
else {
  process.stderr.write('usage: node bench/reference-servers.js bare-node|bare-nest\n');
  process.exit(2);
}
process.on('SIGTERM', () => process.exit(0));
