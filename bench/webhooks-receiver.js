#!/usr/bin/env node
// The benchmark's webhook receiver: node:https on 127.0.0.1:443 (the contract's only port; HOST may
// pick another loopback address, so a bench can run beside tests that hold 127.0.0.1:443),
// answering 204 to every POST and keeping, per delivery, when it arrived and how long after its
// event occurred. Driven by its parent over IPC: {cmd: 'reset'|'stats'|'latencies'}.
'use strict';
const https = require('node:https');
const fs = require('node:fs');

const received = []; // [arrivedAtMs, occurredAtMs | NaN]
let bodies = 0;
const ids = new Set();

const server = https.createServer({ key: fs.readFileSync(process.env.TLS_KEY_FILE), cert: fs.readFileSync(process.env.TLS_CERT_FILE) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    let occurred = NaN;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      occurred = Date.parse(body.occurred_at);
      if (body.id) ids.add(body.id);
    } catch {
      // the bare loop's bodies are valid JSON too; anything else just counts
    }
    bodies++;
    received.push([now, occurred]);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 10_000;
server.listen(Number(process.env.PORT || 443), process.env.HOST || '127.0.0.1', () => process.send({ ready: true }));
process.on('message', (m) => {
  if (m.cmd === 'reset') {
    received.length = 0;
    bodies = 0;
    ids.clear();
    process.send({ reset: true });
  } else if (m.cmd === 'stats') {
    process.send({ stats: { count: bodies, unique: ids.size, first: received[0]?.[0] ?? null, last: received[received.length - 1]?.[0] ?? null } });
  } else if (m.cmd === 'latencies') {
    process.send({ latencies: received.map(([at, occ]) => at - occ).filter((x) => Number.isFinite(x)) });
  }
});
process.on('disconnect', () => process.exit(0));
