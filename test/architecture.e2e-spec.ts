import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '..');

interface Probe {
  /** Where the probe pretends to live (the file need not exist: ESLint is given its text). */
  file: string;
  from: string;
}

/**
 * Lints each probe's one import with the project's ESLint config, in a plain Node process (the
 * config is an ES module, which Jest's module system does not load), and answers the rules hit.
 */
function lint(probes: Probe[]): string[][] {
  const script = `
    const { ESLint } = require('eslint');
    const probes = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    (async () => {
      const eslint = new ESLint({ cwd: ${JSON.stringify(ROOT)} });
      const out = [];
      for (const p of probes) {
        const [r] = await eslint.lintText("import * as probe from '" + p.from + "';\\nexport default probe;\\n", { filePath: p.file });
        out.push(r.messages.map((m) => m.ruleId ?? m.message));
      }
      process.stdout.write(JSON.stringify(out));
    })().catch((e) => { process.stderr.write(String(e && e.stack || e)); process.exit(1); });
  `;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, input: JSON.stringify(probes), encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`eslint probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[][];
}

const ZONE = 'import-x/no-restricted-paths';

describe('architecture: the arrows of the README are enforced by npm run lint', () => {
  const wrong: Array<[string, Probe]> = [
    ['the kernel imports another library', { file: 'libs/core/src/probe.ts', from: '@app/config' }],
    ['an infrastructure library imports the domain', { file: 'libs/http/src/probe.ts', from: '@app/domain' }],
    ['… through a relative path', { file: 'libs/auth/src/probe.ts', from: '../../domain/src/people/people.service' }],
    ['the database library imports the entity list outside the CLI data source', { file: 'libs/database/src/probe.ts', from: '@app/domain' }],
    ['the domain imports an HTTP library', { file: 'libs/domain/src/people/probe.ts', from: '@app/http' }],
    ['infrastructure below the edge imports the edge', { file: 'libs/queue/src/probe.ts', from: '@app/auth' }],
    ['the metrics library imports the domain', { file: 'libs/metrics/src/probe.ts', from: '@app/domain' }],
    ['the worker imports an HTTP library', { file: 'apps/worker/src/probe.ts', from: '@app/http' }],
    ['an app imports another app', { file: 'apps/api/src/probe.ts', from: '../../worker/src/worker.module' }],
    ['a library imports an app', { file: 'libs/redis/src/probe.ts', from: '../../../apps/api/src/api.module' }],
  ];
  const right: Array<[string, Probe]> = [
    ['the api imports the domain', { file: 'apps/api/src/probe.ts', from: '@app/domain' }],
    ['the api imports the edge', { file: 'apps/api/src/probe.ts', from: '@app/auth' }],
    ['the domain imports the kernel', { file: 'libs/domain/src/people/probe.ts', from: '@app/core' }],
    ['the domain imports infrastructure', { file: 'libs/domain/src/people/probe.ts', from: '@app/queue' }],
    ['an edge library imports another and the kernel', { file: 'libs/auth/src/probe.ts', from: '@app/http' }],
    ['the domain and the edge import the metrics library', { file: 'libs/idempotency/src/probe.ts', from: '@app/metrics' }],
    ['the TypeORM CLI data source imports the entity list', { file: 'libs/database/src/data-source.ts', from: '@app/domain' }],
  ];
  let results: string[][];

  beforeAll(() => {
    results = lint([...wrong, ...right].map(([, p]) => p));
  }, 90_000);

  it.each(wrong.map(([name], i) => [name, i] as const))('refuses: %s', (_, i) => {
    expect(results[i]).toContain(ZONE);
  });

  it.each(right.map(([name], i) => [name, wrong.length + i] as const))('allows: %s', (_, i) => {
    expect(results[i]).not.toContain(ZONE);
  });
});
