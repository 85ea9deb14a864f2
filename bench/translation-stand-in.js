#!/usr/bin/env node
// A local LibreTranslate stand-in for bench/documents.bench.js, in its own process so that it
// does not share a thread with what is measured: POST /translate {q, source, target, format} →
// {translatedText}, q a string or an array, "translated" to upper case. Listens on 127.0.0.1
// (PORT, 0 for any) and prints {"port"} on stdout once listening.
'use strict';
const http = require('node:http');

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const send = (status, body) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    };
    if (req.method !== 'POST' || req.url !== '/translate') return send(404, { error: 'Not Found' });
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return send(400, { error: 'Invalid JSON' });
    }
    if (body.q === undefined || !body.source || !body.target || body.format !== 'text') return send(400, { error: 'Invalid request' });
    const up = (t) => String(t).toUpperCase();
    send(200, { translatedText: Array.isArray(body.q) ? body.q.map(up) : up(body.q) });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
