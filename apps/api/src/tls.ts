import { AppConfig, ConfigError } from '@kernel/config';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';

/**
 * TLS material: TLS_CERT_FILE/TLS_KEY_FILE when configured; otherwise a self-signed certificate
 * for localhost, generated once and kept under DATA_DIR/tls (refused in production).
 */
export async function loadTls(config: AppConfig): Promise<{ cert: Buffer; key: Buffer }> {
  if (config.tlsCertFile && config.tlsKeyFile) {
    return { cert: readSetting('TLS_CERT_FILE', config.tlsCertFile), key: readSetting('TLS_KEY_FILE', config.tlsKeyFile) };
  }
  if (config.nodeEnv === 'production') {
    throw new ConfigError('Invalid configuration:\n  TLS_CERT_FILE and TLS_KEY_FILE: are required in production (the api serves HTTPS itself)');
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
    // Replicas sharing DATA_DIR may start together: each writes its pair into a directory of its
    // own and renames it into place, so the first pair wins whole and no replica reads one
    // process's certificate with another's key.
    mkdirSync(config.dataDir, { recursive: true });
    const mine = join(config.dataDir, `tls-${process.pid}-${randomBytes(4).toString('hex')}`);
    mkdirSync(mine);
    writeFileSync(join(mine, 'localhost.crt'), pems.cert);
    writeFileSync(join(mine, 'localhost.key'), pems.private, { mode: 0o600 });
    try {
      renameSync(mine, dir);
    } catch (err) {
      rmSync(mine, { recursive: true, force: true });
      // Another replica's pair is in place (a directory cannot be renamed onto a non-empty one).
      if (!existsSync(certPath) || !existsSync(keyPath)) throw err;
    }
  }
  return { cert: readFileSync(certPath), key: readFileSync(keyPath) };
}

function readSetting(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`Invalid configuration:\n  ${setting}: cannot read ${file}: ${(err as Error).message}`);
  }
}
