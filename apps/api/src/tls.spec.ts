import { AppConfig } from '@kernel/config';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { loadTls } from './tls';

describe('loadTls (the development certificate under DATA_DIR)', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'tls-spec-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('replicas starting together on one DATA_DIR all get the same, matching pair, and leave nothing else behind', async () => {
    const config = AppConfig.fromEnv({ DATA_DIR: dataDir, NODE_ENV: 'development', TLS_CERT_FILE: '', TLS_KEY_FILE: '' });
    const pairs = await Promise.all([loadTls(config), loadTls(config), loadTls(config)]);
    for (const p of pairs) {
      expect(p.cert.equals(pairs[0].cert)).toBe(true);
      expect(p.key.equals(pairs[0].key)).toBe(true);
      // A certificate with another process's key would throw here ("key values mismatch").
      expect(() => createSecureContext({ cert: p.cert, key: p.key })).not.toThrow();
    }
    expect(readdirSync(dataDir)).toEqual(['tls']);
    expect(readdirSync(join(dataDir, 'tls')).sort()).toEqual(['localhost.crt', 'localhost.key']);
    // Later starts read the pair kept there.
    const again = await loadTls(config);
    expect(again.cert.equals(pairs[0].cert)).toBe(true);
  }, 60_000);
});
