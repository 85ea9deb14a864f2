// What a report says of its run (the commit, the machine, its load) and where it goes: a JSON file
// for machines and a Markdown file for people, both in the results directory and nowhere else.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { root, resultsDir } = require('./paths');

/** A logger that prints `[tag] message` lines. */
const sayer = (tag) => (msg) => process.stdout.write(`[${tag}] ${msg}\n`);

/**
 * The commit measured, and whether the sources measured differ from it (uncommitted changes under
 * apps/ or libs/, unless `headOnly`); null outside a git checkout. `cwd`: the checkout (this one).
 */
function gitCommit(cwd = root, { headOnly = false } = {}) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (headOnly) return commit;
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'apps', 'libs'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return changed ? `${commit} (with uncommitted changes to apps/ or libs/)` : commit;
  } catch {
    return null;
  }
}

/** What a report says of the machine after its load average. */
const machine = () => ({
  node: process.version,
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model.trim(),
  memory_gib: Math.round(os.totalmem() / 2 ** 30),
});

/** The 1-minute load average, to two decimals. */
const loadAverage = () => +os.loadavg()[0].toFixed(2);

/** The load average now, with a warning through `say` when the machine is busy (above 0.5). */
function loadBefore(say) {
  const load = loadAverage();
  if (load > 0.5) say(`warning: the machine is busy (load average ${load}): numbers will be low and noisy`);
  return load;
}

/** Waits (at most `waitS` seconds) for the load average to fall to `quiet`; the load average then. */
async function waitForQuiet(quiet, waitS, say) {
  const until = Date.now() + waitS * 1000;
  while (os.loadavg()[0] > quiet && Date.now() < until) await new Promise((r) => setTimeout(r, 5000));
  const load = loadAverage();
  if (load > quiet) say(`warning: load average still ${load}; measuring anyway (the numbers will be noisy)`);
  return load;
}

/** Writes `name`.json (the report) and `name`.md (`md`, under `# title` if given) into the results directory; answers their paths. */
function writeResults(name, report, md, title) {
  const dir = resultsDir();
  fs.mkdirSync(dir, { recursive: true });
  const files = [path.join(dir, `${name}.json`), path.join(dir, `${name}.md`)];
  fs.writeFileSync(files[0], `${JSON.stringify(report, null, 2)}\n`);
  fs.writeFileSync(files[1], title ? `# ${title}\n\n${md}` : md);
  process.stdout.write(`written: ${files.map((f) => path.relative(root, f)).join(', ')}\n`);
  return files;
}

module.exports = { gitCommit, loadAverage, loadBefore, machine, sayer, waitForQuiet, writeResults };
