#!/usr/bin/env node
// The full burst for "two of everything" (issue 14, item 1): 5,000 events for two webhooks
// (10,000 deliveries) through two api and two worker processes built from dist, one worker killed
// with SIGKILL and restarted mid-burst:
//   npm run build && node bench/replicas.bench.js
// It runs test/replicas.e2e-spec.ts (every check of it, the exactly-once count included) with
// REPLICAS_BURST=5000 (BENCH_BURST to change it); CI runs the same spec with 600 events. Needs
// what the e2e tests need (Postgres, Redis, port 443 for the receiver). Results:
// bench/results/replicas.{json,md}. It fails (exit 1, no results written) when the spec fails.
'use strict';
const lib = require('./lib');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const burst = Number(process.env.BENCH_BURST || 5000);
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-bench-')), 'burst.json');
const load = os.loadavg()[0];
const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), 'test/replicas.e2e-spec.ts'], {
  cwd: lib.root,
  env: { ...process.env, REPLICAS_BURST: String(burst), REPLICAS_RESULT_FILE: out },
  stdio: 'inherit',
});
if (run.status !== 0 || !fs.existsSync(out)) {
  process.stderr.write(`replicas bench: the spec failed (exit ${run.status}); no results written\n`);
  process.exit(1);
}
const r = JSON.parse(fs.readFileSync(out, 'utf8'));
fs.rmSync(path.dirname(out), { recursive: true, force: true });
const report = { commit: lib.gitCommit(), at: new Date().toISOString(), load_average_before: +load.toFixed(2), machine: lib.machine(), ...r };
const md =
  `| events | webhooks | deliveries | all delivered after | received before the restart | attempts in flight at the SIGKILL, sent twice |\n` +
  `|---|---|---|---|---|---|\n` +
  `| ${r.burst} | ${r.webhooks} | ${r.deliveries} | ${r.seconds.toFixed(1)} s | ${r.receivedBeforeRestart} | ${r.inFlightAtKill} |\n\n` +
  `Commit ${report.commit}, ${report.at}, load average ${report.load_average_before} before the run, ${report.machine.cpus} cores. ` +
  `Every other delivery arrived exactly once; "all delivered after" includes BullMQ's lock expiry (up to 30 s) ` +
  `before the killed worker's in-flight jobs are taken up again.\n`;
lib.writeResults('replicas', report, md, 'Replicas: a burst with a worker killed (bench/replicas.bench.js)');
process.stdout.write(md);
