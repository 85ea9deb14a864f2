// What stands in for the world outside the product: the webhook receiver (bench/receiver.js), the
// translation engine (bench/translation-stand-in.js), an SMTP sink.
'use strict';
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { startIpc, track } = require('./children');
const { sleep } = require('./load');

const benchDir = path.join(__dirname, '..');

/**
 * bench/receiver.js on `host`:`port` (127.0.0.1:443, which needs root) with the certificate `tls`
 * (TLS_* settings), its /bench-hang paths holding requests `hangMs`; while the port is taken (another
 * run on this machine), tried again every 2 s for up to `retryForMs`. Answers {proc, reset, stats, latencies}.
 */
async function startReceiver(tls, { host = '127.0.0.1', port = 443, hangMs = 10_000, retryForMs = 0 } = {}) {
  const env = { ...process.env, TLS_CERT_FILE: tls.TLS_CERT_FILE, TLS_KEY_FILE: tls.TLS_KEY_FILE, HOST: host, PORT: String(port), HANG_MS: String(hangMs) };
  for (const until = Date.now() + retryForMs; ; await sleep(2000)) {
    try {
      const { proc, ask } = await startIpc(path.join(benchDir, 'receiver.js'), env);
      return { proc, reset: () => ask('reset'), stats: () => ask('stats'), latencies: () => ask('latencies') };
    } catch (err) {
      if (err.exitCode !== 3 || Date.now() > until)
        throw new Error(`the receiver did not start on ${host}:${port} (port ${port} needs root and must be free): ${err.message}`);
    }
  }
}

/** Waits until `receiver` has `count` deliveries (up to `timeoutMs`): its stats then. */
async function waitReceived(receiver, count, timeoutMs) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await receiver.stats();
    if (s.count >= count) return s;
    if (Date.now() > until) throw new Error(`receiver got ${s.count} of ${count} within ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** The translation engine's stand-in (bench/translation-stand-in.js) in its own process: {proc, url}. */
async function startTranslationStandIn() {
  const proc = track(spawn(process.execPath, [path.join(benchDir, 'translation-stand-in.js')], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const port = await new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`the translation stand-in exited with ${code}`)));
    readline.createInterface({ input: proc.stdout }).once('line', (line) => resolve(JSON.parse(line).port));
  });
  return { proc, url: `http://127.0.0.1:${port}` };
}

/**
 * A minimal SMTP sink on 127.0.0.1 that accepts and drops every message, in this process. Not
 * smtp-server: it holds each greeting back 100 ms to catch early talkers, which would make a local
 * relay look slower than any real one. Answers {url, received(), drain(expected, ms), close()}.
 */
async function smtpSink() {
  let received = 0;
  const sink = net.createServer((socket) => {
    let inData = false;
    let buffer = '';
    socket.on('error', () => socket.destroy());
    socket.write('220 bench-sink ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          received++;
          socket.write('250 OK queued\r\n');
          continue;
        }
        const eol = buffer.indexOf('\r\n');
        if (eol < 0) return;
        const line = buffer.slice(0, eol);
        buffer = buffer.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO') socket.write('250-bench-sink\r\n250 8BITMIME\r\n');
        else if (verb === 'DATA') {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 OK\r\n');
      }
    });
  });
  await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
  return {
    url: `smtp://127.0.0.1:${sink.address().port}`,
    received: () => received,
    /** Waits up to `ms` for `expected` mails in all: the seconds it took past this call, and the count then. */
    async drain(expected, ms = 60000) {
      const started = Date.now();
      while (received < expected && Date.now() - started < ms) await sleep(50);
      return { expected, received, waited_s: +((Date.now() - started) / 1000).toFixed(1) };
    },
    close: () => new Promise((r) => sink.close(() => r())),
  };
}

module.exports = { smtpSink, startReceiver, startTranslationStandIn, waitReceived };
