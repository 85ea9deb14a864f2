#!/usr/bin/env node
// The fairness benchmark's two webhook receivers, on 127.0.0.1:443 (the contract's only port) in
// one process of their own: /bench-fast answers 204 at once and keeps each delivery's
// event-to-receipt time; /bench-hang holds every request for HANG_MS (10 s: the worker gives up
// first) and counts the requests it holds at once. Driven by its parent over IPC:
// {cmd: 'reset'|'stats'|'latencies'}.
'use strict';
const https = require('node:https');
const fs = require('node:fs');

const HANG_MS = Number(process.env.HANG_MS || 10_000);
let fast = []; // [arrivedAtMs, occurredAtMs]
let fastIds = new Set();
const hang = { requests: 0, ids: new Set(), inFlight: 0, maxInFlight: 0 };

const server = https.createServer({ key: fs.readFileSync(process.env.TLS_KEY_FILE), cert: fs.readFileSync(process.env.TLS_CERT_FILE) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      // counted all the same
    }
    if (req.url.startsWith('/bench-hang')) {
      hang.requests++;
      if (body.id) hang.ids.add(body.id);
      hang.inFlight++;
      hang.maxInFlight = Math.max(hang.maxInFlight, hang.inFlight);
      res.once('close', () => hang.inFlight--);
      const timer = setTimeout(() => {
        if (!res.destroyed) res.writeHead(204).end();
      }, HANG_MS);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    fast.push([now, Date.parse(body.occurred_at)]);
    if (body.id) fastIds.add(body.id);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 10_000;
// Port 443 taken (another run's receiver): exit 3, and the parent tries again shortly.
server.once('error', (err) => process.exit(err.code === 'EADDRINUSE' ? 3 : 1));
server.listen(Number(process.env.PORT || 443), '127.0.0.1', () => process.send({ ready: true }));
process.on('message', (m) => {
  if (m.cmd === 'reset') {
    fast = [];
    fastIds = new Set();
    hang.requests = 0;
    hang.ids.clear();
    hang.maxInFlight = hang.inFlight;
    process.send({ reset: true });
  } else if (m.cmd === 'stats') {
    process.send({
      stats: {
        fast: fast.length,
        fast_unique: fastIds.size,
        hang_requests: hang.requests,
        hang_unique: hang.ids.size,
        hang_in_flight: hang.inFlight,
        hang_max_in_flight: hang.maxInFlight,
      },
    });
  } else if (m.cmd === 'latencies') {
    process.send({ latencies: fast.map(([at, occ]) => [occ, at - occ]).filter(([, x]) => Number.isFinite(x)) });
  }
});
process.on('disconnect', () => process.exit(0));
