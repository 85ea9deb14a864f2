#!/usr/bin/env node
// Compiles apps/ and libs/ with swc (path aliases rewritten to relative requires), and copies the
// files read at run time beside the code. Type checking is a separate step (`npm run typecheck`),
// run by `npm test`. The benchmarks build into their own directory with the same function.
const { execFileSync } = require('node:child_process');
const { cpSync, existsSync, readdirSync, rmSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
/**
 * Read at run time beside the compiled code: the Integrations section's templates, stylesheet and
 * script (the web kit's console, and each feature's console/views), and the OpenAPI description's
 * recorded examples.
 */
const RUNTIME_FILES = [
  'libs/web/console/views',
  'libs/web/console/assets',
  'libs/web/openapi/examples',
  ...readdirSync(path.join(root, 'libs/features'))
    .map((feature) => `libs/features/${feature}/console/views`)
    .filter((dir) => existsSync(path.join(root, dir))),
];

/** A fresh build of apps/ and libs/ in `distDir`. */
function buildInto(distDir) {
  rmSync(distDir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [require.resolve('@swc/cli/bin/swc.js'), 'apps', 'libs', '-d', distDir, '--config-file', '.swcrc', '--ignore', '**/*.spec.ts', '--quiet'],
    { cwd: root, stdio: 'inherit' },
  );
  for (const dir of RUNTIME_FILES) cpSync(path.join(root, dir), path.join(distDir, dir), { recursive: true });
}

module.exports = { buildInto };
if (require.main === module) buildInto(path.join(root, 'dist'));
