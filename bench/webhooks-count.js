// Bench-only preload (`node --require bench/webhooks-count.js …`): counts, inside the worker process,
// every SQL statement its pg clients send (pg's Client.prototype.query: the pool's queries, the relay's
// LISTEN connection, TypeORM) and every Redis command its ioredis clients send (Redis.prototype.sendCommand:
// BullMQ's queue, worker and blocking connections, the app's own client; pipelined and MULTI commands one
// by one; EVALSHA/EVAL named by the script they run). Nothing in the product requires it.
// On SIGUSR2 it writes {seq, pg, redis, cpu_us} (counts by label and totals; the process's CPU time so far)
// to BENCH_COUNT_FILE.
'use strict';
const { createHash } = require('node:crypto');
const fs = require('node:fs');

const file = process.env.BENCH_COUNT_FILE;
if (!file) throw new Error('webhooks-count.js needs BENCH_COUNT_FILE');

const pgCounts = new Map();
const redisCounts = new Map();
const bump = (m, k) => m.set(k, (m.get(k) ?? 0) + 1);

// ---- Postgres ----
const pg = require('pg');
const origQuery = pg.Client.prototype.query;
/** A statement's label: its prepared name, else its first words. */
function pgLabel(config) {
  if (config && typeof config === 'object' && typeof config.submit === 'function') return 'submittable';
  if (config && typeof config === 'object') {
    if (config.name) return `prepared:${config.name}`;
    config = config.text;
  }
  return String(config ?? '')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 60);
}
pg.Client.prototype.query = function countedQuery(config, ...rest) {
  bump(pgCounts, pgLabel(config));
  return origQuery.call(this, config, ...rest);
};

// ---- Redis ----
const Redis = require('ioredis');
const scriptNames = new Map(); // sha1 → the name it was defined under
const origDefine = Redis.prototype.defineCommand;
Redis.prototype.defineCommand = function countedDefine(name, definition) {
  if (definition && typeof definition.lua === 'string') scriptNames.set(createHash('sha1').update(definition.lua).digest('hex'), name);
  return origDefine.call(this, name, definition);
};
const origSend = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function countedSend(command, ...rest) {
  let label = String(command?.name ?? '?').toLowerCase();
  if (label === 'evalsha') label = `evalsha:${scriptNames.get(String(command.args?.[0])) ?? '?'}`;
  else if (label === 'eval') label = `eval:${scriptNames.get(createHash('sha1').update(String(command.args?.[0])).digest('hex')) ?? '?'}`;
  bump(redisCounts, label);
  return origSend.call(this, command, ...rest);
};

// BENCH_CPU_PROFILE=<dir>: a CPU profile of each interval between two count requests (the throughput
// phase is one), written as <dir>/worker-<seq>.cpuprofile (the worker's exit re-raises SIGTERM, so
// node's own --cpu-prof never gets to write).
const profileDir = process.env.BENCH_CPU_PROFILE;
let session;
if (profileDir) {
  const inspector = require('node:inspector');
  session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable', () => session.post('Profiler.start'));
}

let seq = 0;
const total = (m) => [...m.values()].reduce((a, b) => a + b, 0);
process.on('SIGUSR2', () => {
  seq++;
  const out = {
    seq,
    pg: { total: total(pgCounts), by: Object.fromEntries(pgCounts) },
    redis: { total: total(redisCounts), by: Object.fromEntries(redisCounts) },
    cpu_us: (({ user, system }) => user + system)(process.cpuUsage()),
  };
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(out));
  fs.renameSync(`${file}.tmp`, file);
  if (session) {
    const n = seq;
    session.post('Profiler.stop', (err, res) => {
      if (!err) fs.writeFileSync(require('node:path').join(profileDir, `worker-${n}.cpuprofile`), JSON.stringify(res.profile));
      session.post('Profiler.start');
    });
  }
});
