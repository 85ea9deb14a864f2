import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { EntityManager } from 'typeorm';
import { AppConfig } from '@kernel/config';
import { Clock, DomainError, notFound } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { AttemptOutcome, DeliveryAttemptsService } from './delivery-attempts.service';
import { TEST_INTERVAL_MS, WebhookTestService } from './webhook-test.service';
import { WebhookEntity } from './webhook.entity';
import { WebhooksService } from './webhooks.service';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const owner = { organisationId: '1', connectionId: '10' };
const noExchange = {
  requestHeaders: null,
  responseHeaders: null,
  responseBody: null,
  responseBodySize: null,
  responseBodyTruncated: false,
  errorClass: null,
};
const sent = { ok: true, status: 200, error: null, durationMs: 42, exchange: noExchange };

/** SET … PX … NX and PTTL over a map; `down` makes every command fail as an unreachable Redis does. */
class FakeRedis {
  status = 'ready';
  down = false;
  keys = new Map<string, number>();
  ttl = 3200;
  calls: unknown[][] = [];

  async set(...args: unknown[]): Promise<'OK' | null> {
    this.calls.push(['set', ...args]);
    if (this.down) throw new Error('Connection is closed.');
    const [key, , px, ms, nx] = args as [string, string, string, number, string];
    if (px !== 'PX' || nx !== 'NX') throw new Error('unexpected SET');
    if (this.keys.has(key)) return null;
    this.keys.set(key, ms);
    return 'OK';
  }

  async pttl(key: string): Promise<number> {
    this.calls.push(['pttl', key]);
    return this.keys.has(key) ? this.ttl : -2;
  }
}

const setup = (outcome: AttemptOutcome = { kind: 'delivered', result: sent, number: 1 }) => {
  const inserted: unknown[][] = [];
  const manager = {
    query: async (sql: string, params: unknown[]) => {
      if (!/^INSERT INTO webhook_deliveries/.test(sql) || !/'webhook\.test'/.test(sql) || !/true, 'queued'/.test(sql)) {
        throw new Error(`unexpected query: ${sql}`);
      }
      inserted.push(params);
      return [];
    },
  } as unknown as EntityManager;
  const tx = { manager } as unknown as TransactionHost;
  const clock: Clock = { now: () => NOW };
  const hooks = new Map(['5', '6'].map((id) => [id, Object.assign(new WebhookEntity(), { id, organisationId: '1', connectionId: '10' })]));
  const webhooks = {
    get: async (connectionId: string, id: string) => {
      const hook = hooks.get(id);
      if (!hook || hook.connectionId !== connectionId) throw notFound('webhook');
      return hook;
    },
  } as unknown as WebhooksService;
  const attempted: string[] = [];
  const attempts = {
    attempt: async (id: string, gate?: unknown) => {
      expect(gate).toBeUndefined();
      attempted.push(id);
      return outcome;
    },
  } as unknown as DeliveryAttemptsService;
  const redis = new FakeRedis();
  const config = { redisPrefix: 'itest' } as AppConfig;
  const service = new WebhookTestService(tx, clock, webhooks, attempts, config, redis as unknown as Redis);
  return { service, redis, inserted, attempted };
};

beforeEach(() => {
  jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
});
afterEach(() => jest.restoreAllMocks());

describe('WebhookTestService.test', () => {
  it('queues a webhook.test delivery for the webhook, tries it at once without a gate, and answers the result', async () => {
    const { service, inserted, attempted } = setup();
    const answer = await service.test(owner, '5');
    expect(inserted).toHaveLength(1);
    const [id, webhookId, organisationId, connectionId, occurredAt, data] = inserted[0];
    expect([webhookId, organisationId, connectionId, occurredAt]).toEqual(['5', '1', '10', NOW.toISOString()]);
    expect(JSON.parse(data as string)).toEqual({ webhook_id: '5', connection_id: '10' });
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(attempted).toEqual([id]);
    expect(answer).toEqual({ deliveryId: id, delivered: true, status: 200, error: null, durationMs: 42 });
  });

  it('answers a failed attempt as not delivered, with what the address said', async () => {
    const result = { ok: false, status: 500, error: 'answered 500', durationMs: 7, exchange: { ...noExchange, errorClass: 'status' as const } };
    const { service } = setup({ kind: 'failed', result, number: 1, retryInMs: null });
    await expect(service.test(owner, '5')).resolves.toMatchObject({ delivered: false, status: 500, error: 'answered 500', durationMs: 7 });
  });

  it('answers a delivery given up before its attempt, or not attempted, as not delivered, saying why', async () => {
    const givenUp = setup({ kind: 'given_up', reason: 'connection_revoked' });
    await expect(givenUp.service.test(owner, '5')).resolves.toMatchObject({
      delivered: false,
      status: null,
      durationMs: 0,
      error: 'given up before the attempt (connection_revoked)',
    });
    const nothing = setup({ kind: 'nothing' });
    await expect(nothing.service.test(owner, '5')).resolves.toMatchObject({ delivered: false, status: null, error: 'not attempted' });
  });

  it("answers not_found for another connection's webhook, taking no turn and sending nothing", async () => {
    const { service, redis, inserted } = setup();
    await expect(service.test({ organisationId: '1', connectionId: '11' }, '5')).rejects.toMatchObject({ code: 'not_found' });
    expect(redis.calls).toEqual([]);
    expect(inserted).toEqual([]);
  });

  it(`spaces the tests of a webhook by ${TEST_INTERVAL_MS} ms: the next one sooner is rate_limited with Retry-After, and not sent`, async () => {
    const { service, redis, inserted, attempted } = setup();
    await service.test(owner, '5');
    expect(redis.calls[0]).toEqual(['set', 'itest:webhook-test:5', '1', 'PX', TEST_INTERVAL_MS, 'NX']);
    redis.ttl = 3200;
    const err = await service.test(owner, '5').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'rate_limited', headers: { 'Retry-After': '4' } });
    expect((err as Error).message).toContain('in 4 s');
    expect(inserted).toHaveLength(1);
    expect(attempted).toHaveLength(1);
  });

  it('rounds the wait up to whole seconds, and says the whole interval when the key has no time left to read', async () => {
    const { service, redis } = setup();
    await service.test(owner, '5');
    redis.ttl = 20;
    await expect(service.test(owner, '5')).rejects.toMatchObject({ headers: { 'Retry-After': '1' } });
    redis.ttl = -1;
    await expect(service.test(owner, '5')).rejects.toMatchObject({ headers: { 'Retry-After': String(TEST_INTERVAL_MS / 1000) } });
  });

  it('counts the spacing per webhook', async () => {
    const { service, inserted } = setup();
    await service.test(owner, '5');
    await expect(service.test(owner, '6')).resolves.toMatchObject({ delivered: true });
    expect(inserted.map((params) => params[1])).toEqual(['5', '6']);
  });

  it('sends the test without spacing while Redis fails or is known to be away', async () => {
    const failing = setup();
    failing.redis.down = true;
    await expect(failing.service.test(owner, '5')).resolves.toMatchObject({ delivered: true });
    expect(failing.inserted).toHaveLength(1);

    const away = setup();
    away.redis.status = 'reconnecting';
    await expect(away.service.test(owner, '5')).resolves.toMatchObject({ delivered: true });
    expect(away.redis.calls).toEqual([]);
    expect(away.inserted).toHaveLength(1);
  });
});
