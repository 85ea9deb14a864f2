// Helpers every benchmark script shares. Plain CommonJS, loopback only.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The q-quantile (0..1) of an ascending array. */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

/** A self-signed certificate for localhost/`host` under `dir/tls`, made once; as TLS_* settings. */
async function ensureCert(dir, host = '127.0.0.1') {
  const cert = path.join(dir, 'tls', 'localhost.crt');
  const key = path.join(dir, 'tls', 'localhost.key');
  if (!fs.existsSync(cert) || !fs.existsSync(key)) {
    const pems = await require('selfsigned').generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: host }] }],
    });
    fs.mkdirSync(path.dirname(cert), { recursive: true });
    fs.writeFileSync(cert, pems.cert);
    fs.writeFileSync(key, pems.private, { mode: 0o600 });
  }
  return { TLS_CERT_FILE: cert, TLS_KEY_FILE: key };
}

module.exports = { ensureCert, quantile, sleep };
