'use strict';
// What `npm run dev` gives the api and the worker so that `npm run admin -- webhook listen` can
// receive webhooks on this machine: a certificate for 127.0.0.1, made once under DATA_DIR, that both
// processes trust (NODE_EXTRA_CA_CERTS), and an allowance for that one address
// (WEBHOOK_ALLOWED_PRIVATE_CIDRS). The receiver listens on 127.0.0.1:443, since the contract allows
// port 443 only. With NODE_ENV=production dev changes nothing: the address rules stay as they are.
// The location and address match LOCAL_RECEIVER in libs/features/webhooks/cli/listen.command.ts.
const fs = require('node:fs');
const path = require('node:path');

const RECEIVER = { dir: 'webhook-receiver', cidr: '127.0.0.1/32' };

async function ensureReceiverCertificate(dataDir) {
  const dir = path.join(dataDir, RECEIVER.dir);
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  if (!fs.existsSync(cert) || !fs.existsSync(key)) {
    const { generate } = require('selfsigned');
    const pems = await generate([{ name: 'commonName', value: 'local webhook receiver (npm run dev)' }], {
      keySize: 2048,
      algorithm: 'sha256',
      days: 825,
      extensions: [
        { name: 'basicConstraints', cA: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    });
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(key, pems.private, { mode: 0o600 });
    fs.writeFileSync(cert, pems.cert);
  }
  return { dir, cert, key };
}

/**
 * Adds the receiver to `env` (the api's and the worker's environment). A NODE_EXTRA_CA_CERTS already
 * set is kept: both are written into one bundle, since Node reads a single file.
 */
async function allowLocalReceiver(env, dataDir) {
  if (env.NODE_ENV === 'production') return null;
  const files = await ensureReceiverCertificate(dataDir);
  let trust = files.cert;
  if (env.NODE_EXTRA_CA_CERTS) {
    trust = path.join(files.dir, 'trust.pem');
    fs.writeFileSync(trust, `${fs.readFileSync(env.NODE_EXTRA_CA_CERTS, 'utf8').trimEnd()}\n${fs.readFileSync(files.cert, 'utf8')}`);
  }
  env.NODE_EXTRA_CA_CERTS = trust;
  const cidrs = (env.WEBHOOK_ALLOWED_PRIVATE_CIDRS ?? '')
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (!cidrs.includes(RECEIVER.cidr)) cidrs.push(RECEIVER.cidr);
  env.WEBHOOK_ALLOWED_PRIVATE_CIDRS = cidrs.join(',');
  return files;
}

module.exports = { allowLocalReceiver, ensureReceiverCertificate, RECEIVER };
