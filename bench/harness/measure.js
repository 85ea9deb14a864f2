// Summaries (quantiles, medians, ranges), what processes use, read from /proc (CPU time per process
// and per item, resident memory), and what Postgres does with a query (its plan and time).
'use strict';
const fs = require('node:fs');

// ---- summaries ----

/** The q-quantile (0..1) of an ascending array. */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];

const ascending = (xs) => [...xs].sort((a, b) => a - b);

/** The median; of an even count, the mean of the two middle values. */
function median(xs) {
  const s = ascending(xs);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The median; of an even count, the upper of the two middle values. */
const upperMedian = (xs) => ascending(xs)[Math.floor(xs.length / 2)];

/** The median; of an even count, the lower of the two middle values. */
const lowerMedian = (xs) => quantile(ascending(xs), 0.5);

/** `min–max` of numbers. */
const spread = (xs) => `${Math.min(...xs)}–${Math.max(...xs)}`;

/** `x` to two decimals. */
const round2 = (x) => Math.round(x * 100) / 100;

/** p50, p99, mean and max of millisecond timings, to two decimals. */
function summariseMs(times) {
  const sorted = ascending(times);
  const r = (x) => +x.toFixed(2);
  return {
    p50_ms: r(quantile(sorted, 0.5)),
    p99_ms: r(quantile(sorted, 0.99)),
    mean_ms: r(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    max_ms: r(sorted[sorted.length - 1]),
  };
}

/** count, p50, p99 and max of latencies as they are (no rounding); nulls when there are none. */
function latencySummary(lat) {
  const sorted = ascending(lat);
  if (sorted.length === 0) return { count: 0, p50_ms: null, p99_ms: null, max_ms: null };
  return { count: sorted.length, p50_ms: quantile(sorted, 0.5), p99_ms: quantile(sorted, 0.99), max_ms: sorted[sorted.length - 1] };
}

// ---- /proc ----

/** utime + stime in ms from the text of a /proc/<pid>/stat (the fields after the name, which may hold spaces or parentheses; USER_HZ is 100 on Linux). */
function statCpuMs(stat) {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time process `pid` has used so far, in ms. Read around a measured slice, it gives the CPU a
 * request costs the process, which moves far less with other work on a shared machine than req/s.
 */
const cpuMs = (pid) => statCpuMs(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));

/** CPU time so far (ms) of each of `pids` that still runs, by pid. */
function cpuOfPids(pids) {
  const out = new Map();
  for (const pid of pids) {
    try {
      out.set(pid, cpuMs(pid));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** What the pids of `after` used since `before` (two cpuOfPids readings), in ms, summed. */
const cpuSince = (before, after) => [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);

/**
 * The machine's CPU by part, for one measured phase: `parts` names a pid for each of the bench's own
 * processes (`self` is this process), and the local Postgres and Redis servers are counted over every
 * process of theirs (`postgres` backends and helpers, `redis-server`). Call it before and after the
 * phase and hand both to cpuPerItem, which counts each server process by what it used between the two
 * (all of it for one started in between). A server process that exits in between (a pooled connection
 * closed as idle) is left out: what it used in the phase is lost. On a machine whose servers others use
 * too, `postgresPids` (pids as strings: the backends of the bench's database) limits Postgres to those
 * processes, and `redis: false` leaves the Redis server out.
 */
function machineCpu(parts, { postgresPids, redis = true } = {}) {
  const servers = {};
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone since the listing
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const part = name === 'postgres' ? 'postgres' : name === 'redis-server' ? 'redis' : null;
    if (!part || (part === 'postgres' && postgresPids && !postgresPids.has(entry)) || (part === 'redis' && !redis)) continue;
    servers[entry] = { part, ms: statCpuMs(stat) };
  }
  const own = {};
  for (const [part, pid] of Object.entries(parts)) {
    if (pid === 'self') {
      const u = process.cpuUsage();
      own[part] = (u.user + u.system) / 1000;
    } else own[part] = cpuMs(pid);
  }
  return { servers, own };
}

/** What the machine used between two machineCpu readings, in ms per item (n items in the phase), by part and in all; and the cores it kept busy over `seconds`. */
function cpuPerItem(before, after, n, seconds) {
  const ms = { postgres: 0 };
  if (Object.values(after.servers).some((x) => x.part === 'redis')) ms.redis = 0;
  for (const [pid, { part, ms: used }] of Object.entries(after.servers)) {
    const earlier = before.servers[pid];
    // Less than before: the pid was reused by a process started in between.
    ms[part] += earlier && earlier.part === part && used >= earlier.ms ? used - earlier.ms : used;
  }
  for (const [part, used] of Object.entries(after.own)) ms[part] = used - (before.own[part] ?? 0);
  const by = {};
  let total = 0;
  for (const [part, v] of Object.entries(ms)) {
    by[part] = Math.round((v / n) * 1000) / 1000;
    total += v;
  }
  return { by, total: Math.round((total / n) * 1000) / 1000, cores_busy: seconds ? Math.round((total / 1000 / seconds) * 100) / 100 : null };
}

/** Resident memory now and its peak (VmRSS, VmHWM) of process `pid`, in kB. */
function memoryKb(pid) {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1]);
  return { rss_kb: kb('VmRSS'), hwm_kb: kb('VmHWM') };
}

/** Resets process `pid`'s peak resident memory (VmHWM) to its current RSS. */
const resetPeakMemory = (pid) => fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** Resident memory of process `pid` in MiB, to one decimal. */
const rssMiB = (pid) => +(memoryKb(pid).rss_kb / 1024).toFixed(1);

// ---- Postgres ----

/**
 * `EXPLAIN (ANALYZE, BUFFERS)` of `sql` with `params` through `db` (a pg client): the time Postgres
 * spent executing it and its scan node (the first node down the plan with an index condition or a
 * filter): type, index, condition, filter and the rows the filter removed.
 */
async function explainScan(db, sql, params) {
  const { rows } = await db.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const plan = rows[0]['QUERY PLAN'][0];
  const scan = (node) => (node['Index Cond'] || node.Filter || !node.Plans ? node : scan(node.Plans[0]));
  const s = scan(plan.Plan);
  return {
    execution_ms: plan['Execution Time'],
    node: s['Node Type'],
    index: s['Index Name'] ?? null,
    index_cond: s['Index Cond'] ?? null,
    filter: s.Filter ?? null,
    rows_removed_by_filter: s['Rows Removed by Filter'] ?? 0,
  };
}

module.exports = {
  cpuMs,
  explainScan,
  cpuOfPids,
  cpuPerItem,
  cpuSince,
  latencySummary,
  lowerMedian,
  machineCpu,
  median,
  memoryKb,
  quantile,
  resetPeakMemory,
  round2,
  rssMiB,
  spread,
  summariseMs,
  upperMedian,
};
