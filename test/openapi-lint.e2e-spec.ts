import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { useApi } from './support/api';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '..');

/**
 * The served description passes Redocly CLI's lint with the project's rules (redocly.yaml): no
 * error and no warning (a rule the project does not keep is turned off there, with its reason).
 */
describe('OpenAPI description: Redocly lint', () => {
  const { api } = useApi();

  it('has no error and no warning under redocly.yaml', async () => {
    const doc = (await api.http().get('/v1/openapi.json')).body;
    expect(doc.servers).toEqual([expect.objectContaining({ url: api.config.publicBaseUrl })]);
    const file = join(mkdtempSync(join(tmpdir(), 'redocly-')), 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const cli = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
    const { stdout } = await run(process.execPath, [cli, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
    const report = JSON.parse(stdout.slice(stdout.indexOf('{')));
    const problems = report.problems.map(
      (p: { ruleId: string; message: string; location: Array<{ pointer: string }> }) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 0 });
  }, 120000);
});
