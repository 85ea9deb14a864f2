#!/usr/bin/env node
// The benches' webhook receiver, in a process of its own so that it does not share an event loop
// with what it measures: node:https on HOST (127.0.0.1):PORT (443, the contract's only port).
// Paths under /bench-hang hold every request HANG_MS (the worker gives up first) and count how many
// it holds at once; every other POST is answered 204 at once and kept: when it arrived, how long
// after its event occurred, its delivery id. Driven by its parent over IPC: {cmd: 'reset'|'stats'|'latencies'}.
// Port taken: exit 3.
'use strict';
const https = require('node:https');
const fs = require('node:fs');

const HANG_MS = Number(process.env.HANG_MS || 10_000);
const received = []; // [arrivedAtMs, occurredAtMs | NaN]
const ids = new Set();
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
      const timer = setTimeout(() => {
        if (!res.destroyed) res.writeHead(204).end();
      }, HANG_MS);
      res.once('close', () => {
        hang.inFlight--;
        clearTimeout(timer);
      });
      return;
    }
    received.push([now, Date.parse(body.occurred_at)]);
    if (body.id) ids.add(body.id);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 10_000;
server.once('error', (err) => process.exit(err.code === 'EADDRINUSE' ? 3 : 1));
server.listen(Number(process.env.PORT || 443), process.env.HOST || '127.0.0.1', () => process.send({ ready: true }));
process.on('message', (m) => {
  if (m.cmd === 'reset') {
    received.length = 0;
    ids.clear();
    hang.requests = 0;
    hang.ids.clear();
    hang.maxInFlight = hang.inFlight;
    process.send({ reset: true });
  } else if (m.cmd === 'stats') {
    process.send({
      stats: {
        count: received.length,
        unique: ids.size,
        first: received[0]?.[0] ?? null,
        last: received[received.length - 1]?.[0] ?? null,
        hang_requests: hang.requests,
        hang_unique: hang.ids.size,
        hang_in_flight: hang.inFlight,
        hang_max_in_flight: hang.maxInFlight,
      },
    });
  } else if (m.cmd === 'latencies') {
    // [occurredAtMs, event → receipt ms] of each delivery whose body said when its event occurred
    process.send({ latencies: received.map(([at, occ]) => [occ, at - occ]).filter(([, ms]) => Number.isFinite(ms)) });
  }
});
process.on('disconnect', () => process.exit(0));
