// Jest's node environment, plus a record of each test's and hook's time against its own limit
// (the timeout given to `it`/`beforeAll`, else the configured testTimeout). The progress reporter
// reads the records at the end of the run and lists the slowest, so a test drifting towards its
// limit on a slow machine shows before it fails there.
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

/**
 * The globals a Node process starts with. Jest's node environment gives every test file each
 * global of this process, and the e2e global setup loads the app's code here first: libraries that
 * keep a registry on the global object (class-validator's metadata storage, TypeORM's metadata
 * args storage) leave it there, so every test file would register its classes into the same one.
 * That registry then holds each finished file's whole module graph (a steady heap growth over a
 * run, until the garbage collector takes most of the time) and makes each later lookup scan the
 * classes of every file before it. Each test file is given only these, and makes its own registries.
 */
const NODE_GLOBALS = new Set(
  JSON.parse(execFileSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(Object.getOwnPropertyNames(globalThis)))'], { encoding: 'utf8' })),
);

const ROOT = '(root)';

function fullName(entry) {
  const names = [];
  for (let block = entry.parent; block && block.name !== 'ROOT_DESCRIBE_BLOCK'; block = block.parent) names.unshift(block.name);
  return names;
}

class TimedEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of Object.getOwnPropertyNames(globalThis)) {
      if (!NODE_GLOBALS.has(name) && Object.getOwnPropertyDescriptor(this.global, name)?.configurable) delete this.global[name];
    }
    const project = config.projectConfig.displayName?.name;
    const tag = project && project !== 'e2e' && project !== 'unit' ? ` [${project}]` : '';
    this.testPath = path.relative(config.globalConfig.rootDir, context.testPath) + tag;
    this.defaultTimeout = config.globalConfig.testTimeout ?? 5000;
    this.recordFile = timingsFile(config.globalConfig.rootDir);
    this.hookStarts = new Map();
  }

  handleTestEvent(event, state) {
    // jest.setTimeout in a spec changes the state's limit, not the entries'.
    const fallback = state?.testTimeout ?? this.defaultTimeout;
    if (event.name === 'hook_start') this.hookStarts.set(event.hook, Date.now());
    if (event.name === 'hook_success' || event.name === 'hook_failure') {
      const started = this.hookStarts.get(event.hook);
      if (started === undefined) return;
      this.hookStarts.delete(event.hook);
      const where = event.test ? [...fullName(event.test), event.test.name] : fullName(event.hook);
      this.record(`${event.hook.type} of ${where.length ? where.join(' › ') : ROOT}`, Date.now() - started, event.hook.timeout || fallback);
    }
    if (event.name === 'test_done' && typeof event.test.duration === 'number') {
      this.record([...fullName(event.test), event.test.name].join(' › '), event.test.duration, event.test.timeout || fallback);
    }
  }

  record(name, ms, timeout) {
    const line = JSON.stringify({ file: this.testPath, name, ms, limit: timeout });
    try {
      fs.appendFileSync(this.recordFile, `${line}\n`);
    } catch {
      // A record that cannot be written costs the listing a line, never the test.
    }
  }
}

/** Where a run's records go (one file per jest process; the reporter clears the folder when a run starts). */
function timingsDir(rootDir) {
  return path.join(rootDir, '.data', 'test', 'timings');
}
function timingsFile(rootDir) {
  const dir = timingsDir(rootDir);
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${process.pid}.jsonl`);
}

module.exports = TimedEnvironment;
module.exports.TestEnvironment = TimedEnvironment;
module.exports.timingsDir = timingsDir;
