import { AppConfig } from '@app/config';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/**
 * TLS material: TLS_CERT_FILE/TLS_KEY_FILE when configured; otherwise a self-signed certificate
 * for localhost, generated once and kept under DATA_DIR/tls (refused in production).
 */
export async function loadTls(config: AppConfig): Promise<{ cert: Buffer; key: Buffer }> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) };
  }
  if (config.nodeEnv === 'production') {
    throw new Error('TLS_CERT_FILE and TLS_KEY_FILE are required in production (the api serves HTTPS itself).');
  }
  const dir = join(config.dataDir, 'tls');
  const certPath = join(dir, 'localhost.crt');
  const keyPath = join(dir, 'localhost.key');
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: false },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
            { type: 7, ip: '::1' },
          ],
        },
      ],
    } as never);
    mkdirSync(dir, { recursive: true });
    writeFileSync(certPath, pems.cert);
    writeFileSync(keyPath, pems.private, { mode: 0o600 });
  }
  return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
}
