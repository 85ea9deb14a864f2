#!/usr/bin/env node
// Part of `npm run lint`: code describes itself as it is, so no source file names an issue of the
// project's tracker by number; history belongs in commits.
'use strict';
const { execFileSync } = require('node:child_process');
const { readFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const ISSUE = /\bissues? #?\d+\b/i;
const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', 'apps', 'libs', 'test', 'scripts', 'bench', 'docker', '*.mjs', '*.js'], {
  cwd: root,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => /\.(ts|js|mjs|cjs|eta|sh|yml|yaml)$/.test(f));

const found = [];
for (const file of files) {
  readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (ISSUE.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
}
if (found.length > 0) {
  console.error(`Source names an issue (describe the code as it is; history belongs in commits):\n${found.join('\n')}`);
  process.exit(1);
}
