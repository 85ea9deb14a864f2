import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApi, TestApi } from './support/api';

const SLOW = 120_000;

/**
 * The committed SDK (sdk/typescript/src/generated) is what the generator makes of the document the
 * current code serves: `scripts/sdk.js check` reads the document from a running api,
 * regenerates into a temporary folder and compares (in its own process: the generator is an ES module).
 */
describe('the TypeScript SDK is generated from the served document', () => {
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    api = await startApi();
    dir = mkdtempSync(join(tmpdir(), 'sdk-drift-'));
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const served = async (): Promise<Record<string, any>> => {
    const res = await fetch(`${api.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, ['scripts/sdk.js', 'check', ...args], { cwd: join(__dirname, '..') }, (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
  const check = (document: unknown, name: string) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(document));
    return run(['--input', file]);
  };

  it(
    'the committed SDK matches what the served document generates (else run `npm run sdk:generate`)',
    async () => {
      const result = await check(await served(), 'served.json');
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
    },
    SLOW,
  );

  it(
    'a change of the document that the SDK does not carry fails the check, naming the files',
    async () => {
      const document = await served();
      document.paths['/v1/me'].get.summary = 'A summary the committed SDK does not carry';
      const result = await check(document, 'changed.json');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('sdk/typescript/src/generated/sdk.gen.ts');
      expect(result.stderr).toContain('npm run sdk:generate');
    },
    SLOW,
  );
});
