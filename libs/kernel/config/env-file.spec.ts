import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadEnvFile as lib } from './env-file';

// npm run dev runs before any build, so it holds a plain-JS twin: both must behave alike.
const dev = require('../../../scripts/dev-env').loadEnvFile as typeof lib;

describe.each([
  ['libs/config', lib],
  ['scripts/dev-env.js', dev],
])('loadEnvFile of %s (the one .env loader of every process)', (_name, loadEnvFile) => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  function envFile(text: string): string {
    const file = join(mkdtempSync(join(tmpdir(), 'envfile-')), '.env');
    writeFileSync(file, text);
    return file;
  }

  it('adds what the file sets, the real environment wins, and says which names came from the file', () => {
    const file = envFile('IA_T_PORT=9443\nIA_T_HOST="127.0.0.1"\n# a comment\nIA_T_REAL=from-file\n');
    process.env.IA_T_REAL = 'from-env';
    expect(loadEnvFile(file, 'development').sort()).toEqual(['IA_T_HOST', 'IA_T_PORT']);
    expect(process.env).toMatchObject({ IA_T_PORT: '9443', IA_T_HOST: '127.0.0.1', IA_T_REAL: 'from-env' });
  });

  it('reads nothing without a file, and nothing in tests', () => {
    expect(loadEnvFile(join(tmpdir(), 'no-such-dir-ia', '.env'), 'development')).toEqual([]);
    const file = envFile('IA_T_TESTMODE=1\n');
    expect(loadEnvFile(file, 'test')).toEqual([]);
    expect(process.env.IA_T_TESTMODE).toBeUndefined();
  });
});
