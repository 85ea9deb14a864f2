import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { EnvSchema } from './env.schema';

const ROOT = join(__dirname, '..', '..', '..');

/** Every property of EnvSchema: each carries a validation decorator, defaults or not. */
const settings = [
  ...new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(EnvSchema, '', true, false)
      .map((m) => m.propertyName),
  ),
];

/** The names in the first column of the settings table of docs/operations/configuration.md (under "## Configuration"). */
function readmeTable(): string[] {
  const readme = readFileSync(join(ROOT, 'docs/operations/configuration.md'), 'utf8');
  const section = readme.split(/^## /m).find((s) => s.startsWith('Configuration')) ?? '';
  return [...section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
}

describe('every setting is documented (so a new one cannot be forgotten)', () => {
  it('finds the settings of EnvSchema', () => {
    expect(settings).toEqual(expect.arrayContaining(['PORT', 'REDIS_PREFIX', 'TLS_CERT_FILE', 'WEBHOOK_RETRY_SCALE']));
  });

  it('each has a row in the settings table of docs/operations/configuration.md, and the table names nothing else', () => {
    const rows = readmeTable();
    expect(settings.filter((name) => !rows.includes(name))).toEqual([]);
    expect(rows.filter((name) => !settings.includes(name))).toEqual([]);
  });

  it('each is in .env.example (set, or commented out)', () => {
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    expect(settings.filter((name) => !new RegExp(`^(# )?${name}=`, 'm').test(example))).toEqual([]);
  });
});
