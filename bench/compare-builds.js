#!/usr/bin/env node
// Did a change make authenticated GET /v1/me faster or slower? The api of two builds runs at once
// (idle when not loaded); each round loads A and B in turn for 5 s (autocannon, 50 connections), the
// order flipped each round, and reads the CPU each process used (/proc). It prints the median over
// the rounds of B's req/s ÷ A's and of B's CPU per request ÷ A's, with the range of the rounds: on a
// shared machine req/s follows whatever else runs, while the CPU a request costs moves much less.
//   node bench/compare-builds.js <distA> <distB>    (each inside this checkout: its node_modules resolve from here)
// Prints only; nothing is written to bench/results/.
'use strict';
const path = require('node:path');
const h = require('./harness');
const { meTenant, startMeApi, work } = require('./me-api');

const ROUNDS = Number(process.env.AB_ROUNDS || 10);
const LOG_LEVEL = process.env.AB_LOG_LEVEL || 'info';
const say = h.sayer('compare');

/** 5 s (or `duration`) of load on `t`: autocannon's result and the CPU µs per request of its api. */
async function load(t, key, duration = 5) {
  const before = h.cpuMs(t.proc.pid);
  const r = await h.cannon({ url: t.url, headers: { authorization: `Bearer ${key}` }, duration, connections: 50 });
  if (r.non2xx || r.errors) throw new Error(`${t.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { r, cpuPerRequest: ((h.cpuMs(t.proc.pid) - before) * 1000) / r.requests.total };
}

async function main() {
  const [distA, distB] = process.argv.slice(2).map((d) => path.resolve(d));
  if (!distA || !distB) throw new Error('usage: node bench/compare-builds.js <distA> <distB>');
  const tls = await h.ensureCert(work);
  const { key } = meTenant(distB, `compare ${new Date().toISOString()}`);
  const targets = [];
  for (const [name, dist] of [
    ['A', distA],
    ['B', distB],
  ]) {
    const api = await startMeApi(name, { dist, logLevel: LOG_LEVEL, tls, logFile: `compare-${name}.log` });
    targets.push({ name, ...api, url: `https://127.0.0.1:${api.port}/v1/me` });
  }
  for (const t of targets) await load(t, key, 3);
  const ratios = [];
  const cpuRatios = [];
  const cpuPerRequest = { A: [], B: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const got = {};
    for (const t of h.alternated(targets, round)) {
      const { r, cpuPerRequest: cpu } = await load(t, key);
      got[t.name] = r;
      cpuPerRequest[t.name].push(cpu);
    }
    ratios.push(got.B.requests.average / got.A.requests.average);
    cpuRatios.push(cpuPerRequest.B.at(-1) / cpuPerRequest.A.at(-1));
    const line = (n) => `${n} ${Math.round(got[n].requests.average)} req/s p99 ${got[n].latency.p99} ms ${Math.round(cpuPerRequest[n].at(-1))} µs CPU/req`;
    say(`round ${round}: ${line('A')} | ${line('B')} | B/A ${ratios.at(-1).toFixed(3)}, CPU/req B/A ${cpuRatios.at(-1).toFixed(3)}`);
  }
  const range = (xs) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
  say(`LOG_LEVEL=${LOG_LEVEL}; B ÷ A req/s, median of ${ROUNDS} rounds: ${h.median(ratios).toFixed(3)} (rounds ${range(ratios)})`);
  say(
    `CPU per request: A ${Math.round(h.median(cpuPerRequest.A))} µs, B ${Math.round(h.median(cpuPerRequest.B))} µs (medians); B ÷ A median ${h.median(cpuRatios).toFixed(3)} (rounds ${range(cpuRatios)})`,
  );
}

h.runMain(main, { tag: 'compare', giveUpMinutes: 10 });
