// `[n/N] PASS file (time, elapsed)` after each test file, beside Jest's default reporter (whose
// summary, with its `Tests:` line, CI reads): the suite runs in band for minutes, so say how far.
'use strict';
const path = require('node:path');

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

module.exports = ProgressReporter;
