// Load from this machine to loopback only: single requests, autocannon, loops bounded in count or
// in time, steady rates, and the orders in which rounds visit builds or targets.
'use strict';
const http = require('node:http');
const https = require('node:https');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A keep-alive agent for the api's self-signed certificate, at most `maxSockets` connections. */
const keepAliveAgent = (maxSockets) => new https.Agent({ keepAlive: true, maxSockets, rejectUnauthorized: false, servername: 'localhost' });

/**
 * One request to `host`:`port` (127.0.0.1, or another loopback address; HTTPS with the api's self-signed certificate accepted,
 * plain HTTP if `tls` is false), through `agent` if given (false: a connection of its own). The body:
 * `json` (sent as `contentType`), `form` (URL-encoded) or `body` (a Buffer sent as `contentType`).
 * Answers {status, headers, body (a Buffer), ms}, ms from before the request to the end of the
 * answer; rejects on a socket error, or once no answer came within `timeout` ms.
 */
function request({
  host = '127.0.0.1',
  port,
  method = 'GET',
  path: pathAndQuery,
  headers = {},
  json,
  form,
  body,
  contentType = 'application/json',
  agent,
  tls = true,
  timeout = 10000,
}) {
  if (!/^127\./.test(host)) return Promise.reject(new Error(`${host} is not a loopback address: the benches load this machine only`));
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let payload = body;
    if (json !== undefined) payload = Buffer.from(JSON.stringify(json));
    if (form !== undefined) [payload, contentType] = [Buffer.from(new URLSearchParams(form).toString()), 'application/x-www-form-urlencoded'];
    const req = (tls ? https : http).request(
      {
        host,
        port,
        method,
        path: pathAndQuery,
        agent,
        timeout,
        ...(tls ? { rejectUnauthorized: false, servername: 'localhost' } : {}),
        headers: payload ? { ...headers, 'content-type': contentType, 'content-length': payload.length } : headers,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), ms: Number(process.hrtime.bigint() - t0) / 1e6 }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout on ${method} ${pathAndQuery}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** autocannon against `url` for `duration` s, `connections` at once (keep-alive, the api's certificate accepted): its result. */
function cannon({ url, headers, duration, connections, pipelining = 1 }) {
  const autocannon = require('autocannon');
  const opts = { url, headers, duration, connections, pipelining, servername: 'localhost' };
  return new Promise((resolve, reject) => autocannon(opts, (err, res) => (err ? reject(err) : resolve(res))));
}

/** `fn` kept `concurrency` times in flight for `seconds`: {per_second, seconds, calls}. */
async function loopFor(seconds, concurrency, fn) {
  let calls = 0;
  const started = process.hrtime.bigint();
  const until = started + BigInt(Math.round(seconds * 1e9));
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (process.hrtime.bigint() < until) {
        await fn();
        calls++;
      }
    }),
  );
  const took = Number(process.hrtime.bigint() - started) / 1e9;
  return { per_second: calls / took, seconds: took, calls };
}

/** `fn(i)` for every i of `from`..`from + count - 1`, `concurrency` at once, each next i taken by whichever loop is free: the seconds it took. */
async function forEachConcurrently(from, count, concurrency, fn) {
  let next = from;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < from + count; i = next++) await fn(i);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** `fn(i)` for i of 0..count-1, the i-th started at i ÷ `perSecond` s (awaited in turn): the seconds it took. */
async function atRate(count, perSecond, fn) {
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = started + (i * 1000) / perSecond - performance.now();
    if (wait > 0) await sleep(wait);
    await fn(i);
  }
  return (performance.now() - started) / 1000;
}

/** Fires `fn` `perSecond` times a second, evenly, until `stop()` says so; never waits for answers. */
function steady(perSecond, fn, stop) {
  const interval = 1000 / perSecond;
  let next = performance.now();
  return new Promise((resolve) => {
    const tick = () => {
      if (stop()) return resolve();
      const now = performance.now();
      while (next <= now) {
        next += interval;
        fn();
      }
      setTimeout(tick, Math.max(1, next - performance.now()));
    };
    tick();
  });
}

/** `items` rotated by `k`: each round (or session) starts with the next one, so every item meets the machine's drift alike. */
const rotated = (items, k) => items.map((_, i) => items[(i + k) % items.length]);

/** `items` in order in odd rounds (1, 3, …) and reversed in even ones: two builds taking turns to go first. */
const alternated = (items, round) => (round % 2 ? items : [...items].reverse());

/** The soak mix's calls per second by kind: a steady, modest load a real tenant could make, not a saturation test. */
const SOAK_RATES = {
  'GET /v1/me': 20,
  'GET /v1/cases': 8,
  'POST /v1/cases': 6,
  'POST /scim/v2/Users': 4,
  'GET /scim/v2/Users?filter': 6,
  'outbox event -> delivery': 20,
};

/**
 * The soak mix's calls by kind (SOAK_RATES's keys), for `steady`. `call(method, path, json)` makes
 * a request and `measure(promise, expectedStatuses)` records it; `event()` puts one event in the
 * outbox (see insertOutboxEvent). The cases and users made are named after `tag`.
 */
function soakMix({ call, measure, event, tag, domain }) {
  let seq = 0;
  return {
    'GET /v1/me': () => measure(call('GET', '/v1/me'), [200]),
    'GET /v1/cases': () => measure(call('GET', '/v1/cases?limit=20'), [200]),
    'POST /v1/cases': () => measure(call('POST', '/v1/cases', { external_ref: `${tag}-${process.pid}-${++seq}`, title: `${tag} case` }), [201]),
    'POST /scim/v2/Users': () => {
      const n = ++seq;
      const userName = `${tag}${n}@${domain}`;
      measure(
        call('POST', '/scim/v2/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName,
          name: { givenName: tag, familyName: `User ${n}` },
          emails: [{ value: userName, primary: true }],
          active: true,
        }),
        [201],
      );
    },
    'GET /scim/v2/Users?filter': () =>
      measure(call('GET', `/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${tag}${Math.max(1, seq - 3)}@${domain}"`)}`), [200]),
    'outbox event -> delivery': event,
  };
}

/** A conversation.ended event of the organisation put straight into the outbox, as the api's own writes do: one delivery per subscribed webhook. */
const insertOutboxEvent = (db, organisationId) =>
  db.query(
    `INSERT INTO outbox_events (organisation_id, event, data) VALUES ($1, 'conversation.ended', jsonb_build_object('conversation_id', md5(random()::text)))`,
    [organisationId],
  );

module.exports = {
  alternated,
  atRate,
  cannon,
  forEachConcurrently,
  insertOutboxEvent,
  keepAliveAgent,
  loopFor,
  request,
  rotated,
  sleep,
  soakMix,
  SOAK_RATES,
  steady,
};
