import { INestApplicationContext } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { TransactionHost } from '@kernel/database';
import { WebhookTls } from '@features/webhooks';
import { Outbox } from '@kernel/events';
import { bullPrefix, QUEUES, WEBHOOK_JOBS } from '@kernel/queue';
import { createRedis, PubSub } from '@kernel/redis';
import { Queue, Worker } from 'bullmq';
import { Cluster } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { makeTenant, startApi, Tenant, TestApi } from './support/api';
import { ClusterNodes, SentinelSet, TlsAclRedis } from './support/redis-modes';
import { retireDeliveries } from './support/webhook-stand';
import { WebhookReceiver } from './support/webhook-receiver';
import { startWebhookWorker } from './support/webhook-worker';

// jest ignores testTimeout inside `projects`, so the slow steps say their own.
const SLOW = 120_000;
/**
 * The failover test's limit: a delivery whose attempt the failover cuts short is sent again at the
 * timetable's first retry, a minute on, so the test may wait that minute on any machine; the limit
 * keeps room for twice that and the failover's own time.
 */
const FAILOVER_LIMIT = 180_000;

/** One receiver for both describes (it holds 127.0.0.1:443), an api and a worker per Redis. */
let receiver: WebhookReceiver;
beforeAll(async () => {
  // Other test runs on this machine may hold port 443 for a while: WebhookReceiver waits 20 s each time.
  for (let tries = 1; ; tries++) {
    try {
      receiver = await WebhookReceiver.start();
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || tries >= 5) throw err;
    }
  }
}, 150_000);
afterAll(() => receiver?.close());

interface WebhookStand {
  api: TestApi;
  worker: INestApplicationContext;
  receiver: WebhookReceiver;
  hook(t: Tenant, label: string): Promise<{ id: string; path: string }>;
  close(): Promise<void>;
}

async function startWebhookStand(env: Record<string, string>): Promise<WebhookStand> {
  const settings = { WEBHOOK_ALLOWED_PRIVATE_CIDRS: '127.0.0.1/32', WORKER_HEALTH_PORT: '0', ...env };
  const api = await startApi(settings);
  let worker: INestApplicationContext;
  try {
    api.app.get(WebhookTls).ca = receiver.cert;
    worker = await startWebhookWorker(AppConfig.fromEnv(settings), receiver.cert);
  } catch (err) {
    await api.close(); // an api left open would keep jest from exiting
    throw err;
  }
  return {
    api,
    worker,
    receiver,
    async hook(t, label) {
      const url = `https://127.0.0.1/${label}-${randomBytes(4).toString('hex')}`;
      const res = await api
        .http()
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url, events: ['conversation.ended'] });
      expect(res.status).toBe(201);
      return { id: res.body.data.id as string, path: new URL(url).pathname };
    },
    async close() {
      await worker.close();
      await retireDeliveries(api.app.get(DataSource));
      await api.close();
    },
  };
}

/** `CLIENT LIST` as one object per connection. */
const clients = (raw: string) =>
  raw
    .trim()
    .split('\n')
    .map((line) => Object.fromEntries(line.split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])));

/** Emits `n` conversation.ended events for the tenant in one transaction; returns their conversation ids. */
async function emit(stand: WebhookStand, t: Tenant, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomBytes(16).toString('hex'));
  await stand.api.app.get(TransactionHost).run(async (m) => {
    for (const id of ids) await stand.api.app.get(Outbox).emit(m, t.organisationId, 'conversation.ended', { conversation_id: id });
  });
  return ids;
}

/** Waits until the receiver has had every one of `ids` under `path`; returns how many requests came (retries included). */
async function allArrived(stand: WebhookStand, path: string, ids: string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = stand.receiver.received(path);
    const seen = new Set(got.map((r) => JSON.parse(r.raw).data.conversation_id));
    if (ids.every((id) => seen.has(id))) return got.length;
    if (Date.now() > deadline) throw new Error(`${ids.filter((id) => seen.has(id)).length} of ${ids.length} events arrived within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The api and the worker on a real
 * redis-server that speaks only TLS and knows only an ACL user, and on a real Sentinel set through
 * a failover. (Run under `flock /tmp/ia-443.lock`: the webhook receiver binds 127.0.0.1:443.)
 */
describe('Redis over TLS with an ACL user (rediss://, REDIS_TLS_CA_FILE)', () => {
  let redis: TlsAclRedis;
  let stand: WebhookStand;

  beforeAll(async () => {
    redis = await TlsAclRedis.start();
    stand = await startWebhookStand({ REDIS_URL: redis.url, REDIS_TLS_CA_FILE: redis.caFile });
  }, SLOW);

  afterAll(async () => {
    await stand?.close();
    await redis?.stop();
  }, SLOW);

  it(
    'events are delivered through BullMQ on it, and the api is ready and subscribed',
    async () => {
      const t = await makeTenant(stand.api.app);
      const hook = await stand.hook(t, 'tls');
      const ids = await emit(stand, t, 20);
      await allArrived(stand, hook.path, ids, 30_000);
      expect((await stand.api.http().get('/health/ready')).status).toBe(200);
      expect(stand.api.app.get(PubSub).ready).toBe(true);
    },
    SLOW,
  );

  it('the refused-key throttle counts there', async () => {
    expect((await stand.api.http().get('/v1/me').set('Authorization', 'Bearer not-a-key')).status).toBe(401);
    const admin = redis.admin();
    try {
      const [, keys] = await admin.scan('0', 'MATCH', `${stand.api.config.redisPrefix}:throttle:*`, 'COUNT', 1000);
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
  });

  it('every connection the api and the worker hold is the ACL user over TLS: the command connection, pub/sub and BullMQ', async () => {
    const admin = redis.admin();
    try {
      const list = clients((await admin.call('CLIENT', 'LIST')) as string).filter((c) => c.cmd !== 'client|list');
      // The server has no plain port and its default user is off: a connection is there only through TLS as ia-app.
      expect(new Set(list.map((c) => c.user))).toEqual(new Set([redis.user]));
      const names = list.map((c) => c.name);
      expect(names).toEqual(expect.arrayContaining(['integrations', 'integrations-sub']));
      // BullMQ's: its workers wait for jobs on blocking connections of their own, named after the
      // queue under the hash-tagged prefix.
      const blocking = list.filter((c) => c.cmd === 'bzpopmin').map((c) => c.name);
      expect(blocking.length).toBeGreaterThan(0);
      expect(blocking.every((n) => n.startsWith(`{${stand.api.config.redisPrefix}}:bull:`))).toBe(true);
    } finally {
      admin.disconnect();
    }
  });

  it('refused: a server certificate not signed by the configured CA, and a wrong password', async () => {
    const attempt = async (env: Record<string, string>) => {
      const r = createRedis(AppConfig.fromEnv(env).redis, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      let last = '';
      r.on('error', (err: Error) => (last = err.message));
      try {
        await r.connect();
        await r.ping();
        return 'connected';
      } catch (err) {
        return last || (err as Error).message;
      } finally {
        r.disconnect();
      }
    };
    // No CA setting: the system's CAs do not know the test CA, and NODE_TLS_REJECT_UNAUTHORIZED=0 (set for the tests) does not switch verification off.
    expect(await attempt({ REDIS_URL: redis.url })).toMatch(/self[- ]signed certificate|unable to verify/i);
    const wrong = redis.url.replace(encodeURIComponent(redis.password), 'wrong');
    expect(await attempt({ REDIS_URL: wrong, REDIS_TLS_CA_FILE: redis.caFile })).toMatch(/WRONGPASS/);
  });
});

describe('Redis Sentinel (REDIS_SENTINELS): a failover during deliveries', () => {
  let set: SentinelSet;
  let stand: WebhookStand;

  beforeAll(async () => {
    set = await SentinelSet.start();
    stand = await startWebhookStand(set.env());
  }, SLOW);

  afterAll(async () => {
    await stand?.close();
    await set?.stop();
  }, SLOW);

  it(
    'SENTINEL FAILOVER while events are queued and delivered: every event arrives, and the processes follow the new master',
    async () => {
      const t = await makeTenant(stand.api.app);
      const hook = await stand.hook(t, 'failover');
      // Answers slow enough that deliveries are still in flight when the master changes.
      stand.receiver.reply(hook.path, { status: 200, delayMs: 20 });
      const ids: string[] = [];
      let failover: Promise<{ from: number; to: number }> | undefined;
      for (let batch = 0; batch < 10; batch++) {
        ids.push(...(await emit(stand, t, 30)));
        if (batch === 3) failover = set.failover();
        await new Promise((r) => setTimeout(r, 100));
      }
      const { from, to } = await failover!;
      expect(from).not.toBe(to);
      const requests = await allArrived(stand, hook.path, ids, 100_000);
      // Nothing lost; attempts in flight when the master changed may have been sent twice (at least once).
      process.stdout.write(`sentinel failover ${from} → ${to}: ${ids.length} events, ${requests} requests (${requests - ids.length} repeated)\n`);

      // Both processes now talk to the new master; the old one is made a replica by the sentinel (after a few seconds).
      await set.until(async () => (await set.role(from)) === 'slave', `port ${from} to be a replica`);
      const direct = set.server(to);
      try {
        const list = clients((await direct.call('CLIENT', 'LIST')) as string);
        expect(list.map((c) => c.name)).toEqual(expect.arrayContaining(['integrations', 'integrations-sub']));
        expect(list.filter((c) => c.cmd === 'bzpopmin').length).toBeGreaterThan(0);
      } finally {
        direct.disconnect();
      }
      expect((await stand.api.http().get('/health/ready')).status).toBe(200);
      // And the api writes there: a refused key is counted on the new master.
      expect((await stand.api.http().get('/v1/me').set('Authorization', 'Bearer not-a-key')).status).toBe(401);
      const again = set.server(to);
      try {
        const [, keys] = await again.scan('0', 'MATCH', `${stand.api.config.redisPrefix}:throttle:*`, 'COUNT', 1000);
        expect(keys.length).toBeGreaterThan(0);
      } finally {
        again.disconnect();
      }
    },
    FAILOVER_LIMIT,
  );
});

describe('Redis Cluster: the BullMQ prefix is a hash tag', () => {
  let nodes: ClusterNodes;

  beforeAll(async () => {
    nodes = await ClusterNodes.start();
  }, SLOW);
  afterAll(() => nodes?.stop(), SLOW);

  /** Adds one job and runs it with a BullMQ worker over a cluster connection; the error if BullMQ refuses. */
  const roundTrip = async (prefix: string): Promise<string> => {
    const connection = new Cluster([{ host: '127.0.0.1', port: nodes.ports[0] }], { redisOptions: { maxRetriesPerRequest: null } });
    const queue = new Queue(QUEUES.webhookDeliveries, { connection, prefix });
    let worker: Worker | undefined;
    try {
      await queue.add(WEBHOOK_JOBS.deliver, { deliveryId: 'cluster-1' }, { jobId: 'cluster-1' });
      const done = new Promise<string>((resolve) => {
        worker = new Worker(QUEUES.webhookDeliveries, async (job) => job.data.deliveryId, { connection, prefix });
        worker.on('completed', (_job, result: string) => resolve(`ran ${result}`));
      });
      return await done;
    } catch (err) {
      return (err as Error).message;
    } finally {
      await worker?.close();
      await queue.close();
      await connection.quit();
    }
  };

  it(
    '{ia}:bull works on a three-node cluster; an unbraced ia:bull is refused (CROSSSLOT)',
    async () => {
      const prefix = 'ia';
      expect(await roundTrip(bullPrefix(prefix))).toBe('ran cluster-1');
      expect(await roundTrip(`${prefix}:bull`)).toMatch(/CROSSSLOT/);
    },
    SLOW,
  );
});
