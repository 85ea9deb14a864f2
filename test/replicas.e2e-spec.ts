import { SCOPES } from '@kernel/core';
import { MIGRATIONS } from '@kernel/database';
import { bullPrefix, QUEUES, SCHEDULES } from '@kernel/queue';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Client } from 'pg';
import request from 'supertest';
import { admin, BuiltProcess } from './support/built-processes';
import { dropDatabase, recreateDatabase, withDatabase } from './support/test-db';
import { WebhookReceiver } from './support/webhook-receiver';

/**
 * Two api and two worker processes, built from dist and started as an operator
 * starts them, on one Postgres (a database of this spec's own) and one Redis (a prefix of its own).
 *
 * The burst is REPLICAS_BURST events (default 600) for two webhooks; `node bench/replicas.bench.js`
 * runs this spec with the 5,000 and keeps the counts in bench/results/.
 */
/** The address both replicas are reached at, as behind a load balancer (the console compares a form's Origin with it). */
const PUBLIC_ORIGIN = 'https://integrations.example.test';
const BURST = Number(process.env.REPLICAS_BURST ?? 600);
// jest ignores testTimeout inside `projects`, so the slow steps say their own (the bench's 5,000 take longer).
const SLOW = Math.max(240_000, BURST * 120);
/** The schedules' period in this spec (SCHEDULE_EVERY_MS), so runs can be counted in seconds. */
const EVERY_MS = 1000;
/** Each worker's delivery slots: at most this many attempts can be in flight in the worker that is killed. */
const CONCURRENCY = 10;
const ROOT = resolve(__dirname, '..');

const rand = () => Math.random().toString(36).slice(2, 10);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const hidden = (html: string, name: string): string => {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no ${name} field in:\n${html.slice(0, 2000)}`);
  return m[1];
};

describe('Replicas: two api and two worker processes on one Postgres and one Redis', () => {
  const server = process.env.TEST_DATABASE_SERVER_URL!;
  const database = `${process.env.TEST_DATABASE_NAME}_replicas`;
  const prefix = `${process.env.REDIS_PREFIX}replicas`;
  const dataDir = resolve(ROOT, '.data', 'test', `replicas-${process.pid}`);
  let env: Record<string, string>;
  let receiver: WebhookReceiver;
  let db: Client;
  let apiA: BuiltProcess;
  let apiB: BuiltProcess;
  const workers: BuiltProcess[] = [];
  const all = (): BuiltProcess[] => [apiA, apiB, ...workers].filter(Boolean);
  let tenant: { organisation_id: string; connection_id: string; key_id: string; key: string };
  /** A one-time console sign-in link for the organisation's integrations manager. */
  let managerLink: string;
  /** A second key of the tenant's connection (the one revoked). */
  let secondKey: { id: string; key: string };
  const spawnedAt = Date.now();
  let workersReady: Promise<void>;
  /** When the killed worker's replacement started: schedules must keep running after its upserts. */
  let restartedAt = 0;

  beforeAll(async () => {
    await recreateDatabase(server, database);
    rmSync(dataDir, { recursive: true, force: true });
    receiver = await WebhookReceiver.start();
    env = {
      DATABASE_URL: withDatabase(server, database),
      REDIS_PREFIX: prefix,
      // One DATA_DIR for both apis, as replicas sharing a volume: neither has a certificate yet.
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      TRUSTED_PROXIES: '127.0.0.1/32',
      WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      SCHEDULE_EVERY_MS: String(EVERY_MS),
      // The processes trust the receiver's certificate as an operator trusts an internal CA.
      NODE_EXTRA_CA_CERTS: receiver.tls.certFile,
      // Replicas behind one load balancer share the console's public origin, which forms must come from.
      PUBLIC_BASE_URL: PUBLIC_ORIGIN,
    };
    // Started at once on a fresh database, both allowed to migrate.
    [apiA, apiB] = await Promise.all(['api A', 'api B'].map((name) => BuiltProcess.start('api', name, { ...env, MIGRATIONS_RUN_ON_START: 'true' })));
    await Promise.all([apiA.ready(), apiB.ready()]);
    db = new Client({ connectionString: env.DATABASE_URL });
    await db.connect();
    // The workers start while the admin CLI makes the organisation (with an integrations manager).
    const starting = Promise.all(['worker 1', 'worker 2'].map((name) => BuiltProcess.start('worker', name, env)));
    const making = (async () => {
      tenant = await admin(['demo', 'setup', '--name', `Replicas ${rand()}`], env);
      const group = await admin<{ id: string }>(
        ['group', 'create', '--org', tenant.organisation_id, '--name', 'Integrations', '--permissions', 'integrations.manage'],
        env,
      );
      const person = await admin<{ id: string }>(
        ['person', 'add', '--org', tenant.organisation_id, '--email', `manager-${rand()}@example.com`, '--name', 'Manager', '--group', group.id],
        env,
      );
      managerLink = (await admin<{ url: string }>(['console', 'link', '--person', person.id], env)).url;
      secondKey = await admin<{ id: string; key: string }>(['key', 'create', '--connection', tenant.connection_id], env);
    })();
    making.catch(() => undefined); // awaited below; not an unhandled rejection meanwhile
    workers.push(...(await starting));
    // The api-only tests run while the workers get ready; the burst waits for them.
    workersReady = Promise.all(workers.map((w) => w.ready())).then(() => undefined);
    workersReady.catch(() => undefined); // awaited in the burst; not an unhandled rejection meanwhile
    await making;
  }, SLOW);

  afterAll(async () => {
    await Promise.all(all().map((p) => p.stop('SIGTERM')));
    await db?.end();
    await receiver?.close();
    await dropDatabase(server, database);
    rmSync(dataDir, { recursive: true, force: true });
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }, SLOW);

  const http = (p: BuiltProcess) => request(p.url);
  const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

  it('two apis started together with MIGRATIONS_RUN_ON_START=true migrate once, and both serve', async () => {
    const applied: Array<{ name: string }> = await db.query(`SELECT name FROM typeorm_migrations ORDER BY id`).then((r) => r.rows);
    expect(applied.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
    for (const api of [apiA, apiB]) {
      expect(api.alive).toBe(true);
      expect((await http(api).get('/v1/me').set(bearer(tenant.key))).status).toBe(200);
    }
    // Neither failed a migration and was saved by a retry (TypeORM's module retries a failed start).
    expect(`${apiA.output}${apiB.output}`).not.toMatch(/already exists|Unable to connect|"level":50/);
  });

  it('the refused-key throttle counts across replicas: 30 refusals on each, then the 61st call on either answers 429', async () => {
    const bad = bearer(`svc_${'2'.repeat(64)}`);
    // Counts are per clock minute: when the 60 refusals straddle a minute, start again from another address.
    for (let round = 0; ; round++) {
      const from = { 'X-Forwarded-For': `198.51.100.${10 + round}` };
      const minute = Math.floor(Date.now() / 60_000);
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) statuses.push((await http(apiA).get('/v1/me').set(bad).set(from)).status);
      for (let i = 0; i < 30; i++) statuses.push((await http(apiB).get('/v1/me').set(bad).set(from)).status);
      const onA = await http(apiA).get('/v1/me').set(bearer(tenant.key)).set(from);
      const onB = await http(apiB).get('/v1/me').set(bad).set(from);
      if (Math.floor(Date.now() / 60_000) !== minute && round < 3) continue;
      expect(statuses).toEqual(Array(60).fill(401));
      expect({ status: onA.status, code: onA.body?.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
      expect({ status: onB.status, code: onB.body?.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
      expect(Number(onA.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Another address is untouched on both.
      const other = { 'X-Forwarded-For': `198.51.100.${200 + round}` };
      expect((await http(apiA).get('/v1/me').set(bearer(tenant.key)).set(other)).status).toBe(200);
      expect((await http(apiB).get('/v1/me').set(bearer(tenant.key)).set(other)).status).toBe(200);
      return;
    }
  });

  it('a key revoked through replica A is refused on replica B on its next call; a scope change likewise', async () => {
    // The integrations manager signs in to the Integrations section on replica A.
    const token = new URL(managerLink).searchParams.get('token')!;
    const browser = request.agent(apiA.url);
    const origin = { Origin: PUBLIC_ORIGIN };
    const linkPage = await browser.get(`/console/sign-in/link?token=${token}`);
    expect(linkPage.status).toBe(200);
    const signedIn = await browser
      .post('/console/sign-in/link')
      .set(origin)
      .type('form')
      .send({ token, _csrf: hidden(linkPage.text, '_csrf') });
    expect({ status: signedIn.status, location: signedIn.headers.location }).toEqual({ status: 303, location: '/console' });
    const csrf = async () => hidden((await browser.get(`/console/connections/${tenant.connection_id}`).expect(200)).text, '_csrf');

    // A second key, used on both replicas (each has it in its key cache now).
    const second = secondKey;
    for (const api of [apiA, apiB]) expect((await http(api).get('/v1/me').set(bearer(second.key))).status).toBe(200);
    const revoked = await browser
      .post(`/console/connections/${tenant.connection_id}/keys/${second.id}/revoke`)
      .set(origin)
      .type('form')
      .send({ _csrf: await csrf() });
    expect(revoked.status).toBe(303);
    const refused = await http(apiB).get('/v1/me').set(bearer(second.key));
    expect({ status: refused.status, code: refused.body?.error?.code }).toEqual({ status: 401, code: 'unauthorised' });
    // The first key of the connection still works on both.
    for (const api of [apiA, apiB]) expect((await http(api).get('/v1/me').set(bearer(tenant.key))).status).toBe(200);

    // Scopes: B reads groups with the key (cached with every scope), A takes groups:read away.
    expect((await http(apiB).get('/v1/groups').set(bearer(tenant.key))).status).toBe(200);
    const kept = SCOPES.filter((s) => s !== 'groups:read');
    const form = [...kept.map((s) => `scopes=${encodeURIComponent(s)}`), `_csrf=${encodeURIComponent(await csrf())}`].join('&');
    const changed = await browser.post(`/console/connections/${tenant.connection_id}/scopes`).set(origin).type('form').send(form);
    expect(changed.status).toBe(303);
    const narrowed = await http(apiB).get('/v1/groups').set(bearer(tenant.key));
    expect({ status: narrowed.status, code: narrowed.body?.error?.code }).toEqual({ status: 403, code: 'scope_missing' });
    expect((await http(apiB).get('/v1/cases').set(bearer(tenant.key))).status).toBe(200);
  });

  it('the test call’s 5-second spacing holds across replicas', async () => {
    const url = `https://127.0.0.1/replicas-test-${rand()}`;
    const made = await http(apiA)
      .post('/v1/webhooks')
      .set(bearer(tenant.key))
      .send({ url, events: ['conversation.ended'] });
    expect(made.status).toBe(201);
    const first = await http(apiA).post(`/v1/webhooks/${made.body.data.id}/test`).set(bearer(tenant.key));
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ delivered: true, status: 200 });
    const again = await http(apiB).post(`/v1/webhooks/${made.body.data.id}/test`).set(bearer(tenant.key));
    expect({ status: again.status, code: again.body?.error?.code }).toEqual({ status: 429, code: 'rate_limited' });
    expect(Number(again.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(again.headers['retry-after'])).toBeLessThanOrEqual(5);
    expect(receiver.received(new URL(url).pathname)).toHaveLength(1);
    await http(apiA).delete(`/v1/webhooks/${made.body.data.id}`).set(bearer(tenant.key)).expect(204);
  });

  it(
    `a burst of ${BURST} events while a worker is killed (SIGKILL) and restarted: each webhook receives every event, twice only what was in flight at the kill`,
    async () => {
      await workersReady;
      // Two webhooks subscribed to the event, one made through each api.
      const hooks: Array<{ id: string; path: string }> = [];
      for (const api of [apiA, apiB]) {
        const path = `/replicas-burst-${rand()}`;
        const res = await http(api)
          .post('/v1/webhooks')
          .set(bearer(tenant.key))
          .send({ url: `https://127.0.0.1${path}`, events: ['conversation.ended'] });
        expect(res.status).toBe(201);
        hooks.push({ id: res.body.data.id, path });
        // Answers slow enough that the killed worker has attempts in flight.
        receiver.reply(path, { status: 200, delayMs: 20 });
      }
      const started = Date.now();
      // The events, written as the outbox writer writes them (its INSERT; the trigger NOTIFYs the relays).
      await db.query(
        `INSERT INTO outbox_events (organisation_id, event, data)
         SELECT $1, 'conversation.ended', jsonb_build_object('conversation_id', md5('replicas' || i::text))
           FROM generate_series(1, $2::int) AS i`,
        [tenant.organisation_id, BURST],
      );
      const expected = BURST * hooks.length;
      const receipts = () => hooks.reduce((n, h) => n + receiver.received(h.path).length, 0);
      const deadline = Date.now() + SLOW - 30_000;
      while (receipts() < expected / 4) {
        if (Date.now() > deadline) throw new Error(`only ${receipts()} receipts before the kill`);
        await sleep(20);
      }
      const killed = workers.shift()!;
      await killed.stop('SIGKILL');
      const beforeRestart = receipts();
      // Killed mid-burst: work was left for the others.
      expect(beforeRestart).toBeLessThan(expected);
      restartedAt = Date.now();
      const restarted = await BuiltProcess.start('worker', 'worker 1 (restarted)', env);
      workers.push(restarted);
      // Ready while the others deliver (a failed start fails the test here or below).
      const restartedReady = restarted.ready();
      restartedReady.catch(() => undefined);

      // Wait until Postgres holds every delivery as delivered.
      const webhooks = hooks.map((h) => h.id);
      for (;;) {
        const { rows } = await db.query(`SELECT state, count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ANY($1) GROUP BY state`, [webhooks]);
        const delivered = rows.find((r) => r.state === 'delivered')?.n ?? 0;
        if (delivered === expected) break;
        if (Date.now() > deadline) throw new Error(`${delivered} of ${expected} deliveries delivered: ${JSON.stringify(rows)}`);
        await sleep(200);
      }
      const seconds = (Date.now() - started) / 1000;
      await restartedReady;

      let inFlightAtKill = 0;
      for (const hook of hooks) {
        const got = receiver.received(hook.path).map((r) => JSON.parse(r.raw) as { id: string; data: { conversation_id: string } });
        // Every event reached this webhook: one delivery per event, each received.
        const deliveries: string[] = (await db.query(`SELECT id FROM webhook_deliveries WHERE webhook_id = $1`, [hook.id])).rows.map((r) => r.id);
        expect(deliveries).toHaveLength(BURST);
        const times = new Map<string, number>();
        for (const g of got) times.set(g.id, (times.get(g.id) ?? 0) + 1);
        expect(deliveries.filter((id) => !times.has(id))).toEqual([]);
        expect(new Set(got.map((g) => g.data.conversation_id)).size).toBe(BURST);
        // An attempt sent twice is one the killed worker sent and never recorded: Postgres holds one
        // attempt per delivery, so any receipt beyond it was in flight when the worker died.
        const attempts: Array<{ delivery_id: string; n: number }> = (
          await db.query(`SELECT delivery_id, count(*)::int AS n FROM webhook_delivery_attempts WHERE delivery_id = ANY($1) GROUP BY delivery_id`, [deliveries])
        ).rows;
        expect(attempts.filter((a) => a.n !== 1)).toEqual([]);
        expect(attempts).toHaveLength(BURST);
        expect([...times.values()].filter((n) => n > 2)).toEqual([]);
        inFlightAtKill += got.length - BURST;
      }
      // Only the killed worker's slots can have been in flight.
      expect(inFlightAtKill).toBeLessThanOrEqual(CONCURRENCY);
      const line =
        `replicas burst: ${BURST} events x ${hooks.length} webhooks = ${expected} deliveries in ${seconds.toFixed(1)} s; ` +
        `${beforeRestart} received before the restart; ${inFlightAtKill} attempt(s) in flight at the SIGKILL were sent twice`;
      process.stdout.write(`${line}\n`);
      if (process.env.REPLICAS_RESULT_FILE) {
        mkdirSync(dirname(process.env.REPLICAS_RESULT_FILE), { recursive: true });
        writeFileSync(
          process.env.REPLICAS_RESULT_FILE,
          `${JSON.stringify({ burst: BURST, webhooks: hooks.length, deliveries: expected, seconds, receivedBeforeRestart: beforeRestart, inFlightAtKill }, null, 2)}\n`,
        );
      }
    },
    SLOW,
  );

  it('scheduled jobs run once per period, not once per worker (a worker restart included)', async () => {
    const opts = { connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, prefix: bullPrefix(prefix) };
    const queues = new Map(Object.values(QUEUES).map((name) => [name, new Queue(name, opts)]));
    try {
      // Let a few more periods pass with both workers (one of them restarted) running.
      await sleep(2 * EVERY_MS);
      for (const [name, queue] of queues) {
        const scheduled = SCHEDULES.filter((s) => s.queue === name).map((s) => s.job);
        // One scheduler per job, whichever worker upserted it and however often.
        expect((await queue.getJobSchedulers()).map((s) => s.key).sort()).toEqual([...scheduled].sort());
        expect(await queue.getJobs(['failed'])).toEqual([]);
        const done = (await queue.getJobs(['completed'])).filter((j) => j.repeatJobKey);
        for (const job of scheduled) {
          // A scheduler's runs are its job ids: `repeat:<job>:<the period's time>`.
          const slots = done
            .filter((j) => j.name === job)
            .map((j) => Number(String(j.id).split(':').pop()))
            .sort((a, b) => a - b);
          const window = Date.now() - spawnedAt;
          expect({ job, enough: slots.length >= 3 }).toEqual({ job, enough: true });
          // Never two runs in one period, and never more runs than periods since the workers started.
          const gaps = slots.slice(1).map((t, i) => t - slots[i]);
          expect({ job, closer: gaps.filter((g) => g < EVERY_MS) }).toEqual({ job, closer: [] });
          expect(slots.length).toBeLessThanOrEqual(Math.ceil(window / EVERY_MS) + 1);
          // And they went on after the restarted worker upserted the schedules again.
          expect({ job, afterRestart: restartedAt > 0 && slots.some((t) => t > restartedAt) }).toEqual({ job, afterRestart: true });
        }
      }
    } finally {
      await Promise.all([...queues.values()].map((q) => q.close()));
    }
  });
});
