#!/usr/bin/env node
// Compiles apps/ and libs/ with swc (path aliases rewritten to relative requires).
// Type checking is a separate step (`npm run typecheck`), run by `npm test`.
const { execFileSync } = require('node:child_process');
const { rmSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
rmSync(path.join(root, 'dist'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [require.resolve('@swc/cli/bin/swc.js'), 'apps', 'libs', '-d', 'dist', '--config-file', '.swcrc', '--ignore', '**/*.spec.ts', '--quiet'],
  { cwd: root, stdio: 'inherit' },
);
// The Integrations section's templates and its stylesheet/script are read at run time beside the code.
for (const dir of ['apps/api/src/console/views', 'apps/api/src/console/assets']) {
  require('node:fs').cpSync(path.join(root, dir), path.join(root, 'dist', dir), { recursive: true });
}
