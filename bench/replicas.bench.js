#!/usr/bin/env node
// A burst with a worker killed: test/replicas.e2e-spec.ts (two apis and two workers built from dist,
// one Postgres, one Redis, the webhook receiver on port 443) run with BENCH_BURST events (5,000) for
// two webhooks instead of CI's 600, one worker killed with SIGKILL and restarted mid-burst; every
// check of the spec applies (the exactly-once count included). It records how long the whole burst
// took and how many attempts were in flight at the kill and went out twice; it fails (exit 1, no
// results written) when the spec fails.
//   npm run build && node bench/replicas.bench.js
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const h = require('./harness');
const { writeReport } = require('./markdown');

const burst = Number(process.env.BENCH_BURST || 5000);
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-bench-')), 'burst.json');
const load = h.loadAverage();
const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), 'test/replicas.e2e-spec.ts'], {
  cwd: h.root,
  env: { ...process.env, REPLICAS_BURST: String(burst), REPLICAS_RESULT_FILE: out },
  stdio: 'inherit',
});
if (run.status !== 0 || !fs.existsSync(out)) {
  process.stderr.write(`replicas bench: the spec failed (exit ${run.status}); no results written\n`);
  process.exit(1);
}
const r = JSON.parse(fs.readFileSync(out, 'utf8'));
fs.rmSync(path.dirname(out), { recursive: true, force: true });
const report = { commit: h.gitCommit(), at: new Date().toISOString(), load_average_before: load, machine: h.machine(), ...r };
process.stdout.write(writeReport('replicas', report));
