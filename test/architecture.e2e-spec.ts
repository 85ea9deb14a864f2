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

const MODEL = 'no-restricted-imports';

describe('architecture: the arrows of docs/architecture.md are enforced by npm run lint', () => {
  const wrong: Array<[string, Probe, string]> = [
    ['a feature reaches into another feature', { file: 'libs/features/cases/probe.ts', from: '../webhooks/model/webhook-url' }, ZONE],
    ['… through an alias path', { file: 'libs/features/cases/probe.ts', from: '@features/webhooks/model/webhook-url' }, ZONE],
    ['a feature reads the entity list', { file: 'libs/features/cases/probe.ts', from: '@features/entities' }, ZONE],
    ["a feature uses another feature's edge door", { file: 'libs/features/webhooks/http/probe.ts', from: '@features/cases/http' }, ZONE],
    ['the kernel imports the web kit', { file: 'libs/kernel/core/probe.ts', from: '@web/http' }, ZONE],
    ['the kernel imports a feature', { file: 'libs/kernel/database/probe.ts', from: '@features/people' }, ZONE],
    ['the web kit imports a feature', { file: 'libs/web/console/probe.ts', from: '@features/webhooks' }, ZONE],
    ['a kernel piece reaches into another', { file: 'libs/kernel/redis/probe.ts', from: '../config/app-config' }, ZONE],
    ['an app reaches into a feature', { file: 'apps/api/src/probe.ts', from: '../../../libs/features/cases/cases.service' }, ZONE],
    ['a test reaches into a feature', { file: 'test/probe.e2e-spec.ts', from: '../libs/features/webhooks/worker/webhook-slots' }, ZONE],
    ['the worker imports an HTTP piece', { file: 'apps/worker/src/probe.ts', from: '@web/http' }, ZONE],
    ['an app imports another app', { file: 'apps/api/src/probe.ts', from: '../../worker/src/worker.module' }, ZONE],
    ['a library imports an app', { file: 'libs/kernel/redis/probe.ts', from: '../../../apps/api/src/api.module' }, ZONE],
    ["a feature's model imports Nest", { file: 'libs/features/webhooks/model/probe.ts', from: '@nestjs/common' }, MODEL],
    ["a feature's model imports TypeORM", { file: 'libs/features/scim/model/probe.ts', from: 'typeorm' }, MODEL],
  ];
  const right: Array<[string, Probe]> = [
    ['a feature imports another through its door', { file: 'libs/features/scim/probe.ts', from: '@features/people' }],
    ['a feature imports the kernel and the web kit', { file: 'libs/features/cases/http/probe.ts', from: '@web/idempotency' }],
    ['a file imports its own feature', { file: 'libs/features/webhooks/worker/probe.ts', from: '../model/retry-timetable' }],
    ['the web kit imports the kernel', { file: 'libs/web/auth/probe.ts', from: '@kernel/redis' }],
    ['the api imports a feature', { file: 'apps/api/src/probe.ts', from: '@features/webhooks' }],
    ["the worker composes a feature's worker edge", { file: 'apps/worker/src/probe.ts', from: '@features/webhooks/worker' }],
    ['the api imports the entity list', { file: 'apps/api/src/probe.ts', from: '@features/entities' }],
    ['the worker uses the idempotency store', { file: 'apps/worker/src/probe.ts', from: '@web/idempotency' }],
  ];
  let results: string[][];

  beforeAll(() => {
    results = lint([...wrong.map(([, p]) => p), ...right.map(([, p]) => p)]);
  }, 90_000);

  it.each(wrong.map(([name, , rule], i) => [name, i, rule] as const))('refuses: %s', (_, i, rule) => {
    expect(results[i]).toContain(rule);
  });

  it.each(right.map(([name], i) => [name, wrong.length + i] as const))('allows: %s', (_, i) => {
    expect(results[i]).not.toContain(ZONE);
    expect(results[i]).not.toContain(MODEL);
  });
});
