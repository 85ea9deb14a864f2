// `[n/N] PASS file (time, elapsed)` after each test file, beside Jest's default reporter (whose
// summary, with its `Tests:` line, CI reads): the suite runs in band for minutes, so say how far.
// At the end of a run it lists the twenty slowest tests and hooks with their limits (from the
// records test/support/timed-environment.js keeps), and writes the list to .data/test/slowest-tests.txt.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { timingsDir } = require('./timed-environment');

/** How many of the slowest to list, and the share of its limit above which a line is marked. */
const LISTED = 20;
const MARK_ABOVE = 0.5;

class ProgressReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.done = 0;
    this.total = 0;
    this.started = Date.now();
  }

  onRunStart(results) {
    this.total = results.numTotalTestSuites;
    this.started = Date.now();
    fs.rmSync(timingsDir(this.rootDir), { recursive: true, force: true });
  }

  onRunComplete() {
    const rows = readTimings(timingsDir(this.rootDir));
    if (rows.length === 0) return;
    rows.sort((a, b) => b.ms - a.ms);
    const over = rows.filter((r) => r.ms > r.limit * MARK_ABOVE);
    const top = rows.slice(0, LISTED);
    const line = (r) => {
      const share = Math.round((100 * r.ms) / r.limit);
      return `${r.ms > r.limit * MARK_ABOVE ? '!' : ' '} ${(r.ms / 1000).toFixed(1).padStart(6)} s / ${String(r.limit / 1000).padStart(3)} s (${String(share).padStart(2)}%)  ${r.file}: ${r.name}`;
    };
    const lines = [
      `The ${top.length} slowest of ${rows.length} tests and hooks (time / limit; ! above ${MARK_ABOVE * 100}% of its limit: ${over.length}):`,
      ...top.map(line),
      // A quicker one can still be close to a smaller limit.
      ...over.filter((r) => !top.includes(r)).map(line),
    ];
    const text = `${lines.join('\n')}\n`;
    process.stderr.write(`\n${text}`);
    try {
      fs.writeFileSync(path.join(this.rootDir, '.data', 'test', 'slowest-tests.txt'), text);
    } catch {
      // The listing on stderr is the one that matters.
    }
  }

  onTestResult(test, result) {
    this.done += 1;
    const failed = result.numFailingTests > 0 || result.testExecError;
    const { start, end } = result.perfStats;
    const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;
    const clock = (ms) => `${Math.floor(ms / 60000)}:${String(Math.floor(ms / 1000) % 60).padStart(2, '0')}`;
    const project = test.context?.config?.displayName?.name;
    const file = path.relative(this.rootDir, test.path) + (project && project !== 'e2e' && project !== 'unit' ? ` [${project}]` : '');
    process.stderr.write(
      `[${this.done}/${this.total}] ${failed ? 'FAIL' : 'PASS'} ${file} (${secs(end - start)}; ${clock(Date.now() - this.started)} so far)\n`,
    );
  }
}

function readTimings(dir) {
  let files = [];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const rows = [];
  for (const f of files) {
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (!line) continue;
      try {
        rows.push(JSON.parse(line));
      } catch {
        // A line cut by a killed process is skipped.
      }
    }
  }
  return rows;
}

module.exports = ProgressReporter;
