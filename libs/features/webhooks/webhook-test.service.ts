import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { REDIS, RedisOutage } from '@kernel/redis';
import type Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { Clock, DomainError } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { DeliveryAttemptsService } from './delivery-attempts.service';
import { WebhooksService } from './webhooks.service';

/** One test per webhook per this long; sooner answers 429 rate_limited. */
export const TEST_INTERVAL_MS = 5000;

export interface TestAnswer {
  deliveryId: string;
  delivered: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * The test call: a signed `webhook.test` sent now, tried once, never retried, logged like any
 * delivery, and never counted towards switching the webhook off (which can still be tested).
 * The 5-second spacing is counted in Redis, so every api replica sees the same last test; while
 * Redis is unreachable the spacing is not counted (the test is sent; logged once per outage), as
 * the refused-key throttle degrades, rather than answering 500 or waiting for Redis.
 */
@Injectable()
export class WebhookTestService {
  private readonly outage: RedisOutage;

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly webhooks: WebhooksService,
    private readonly attempts: DeliveryAttemptsService,
    private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {
    this.outage = new RedisOutage(
      redis,
      new Logger(WebhookTestService.name),
      'the 5 seconds between test calls are not counted',
      'test calls are spaced again',
    );
  }

  async test(owner: { organisationId: string; connectionId: string }, webhookId: string): Promise<TestAnswer> {
    const webhook = await this.webhooks.get(owner.connectionId, webhookId);
    await this.takeTurn(webhook.id);
    const id = randomBytes(16).toString('hex');
    const now = this.clock.now().toISOString();
    await this.tx.manager.query(
      `INSERT INTO webhook_deliveries
         (id, webhook_id, organisation_id, connection_id, event, occurred_at, data, is_test, state, next_attempt_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'webhook.test', $5, $6, true, 'queued', $5, $5, $5)`,
      [id, webhook.id, webhook.organisationId, webhook.connectionId, now, JSON.stringify({ webhook_id: webhook.id, connection_id: webhook.connectionId })],
    );
    const outcome = await this.attempts.attempt(id);
    if (outcome.kind === 'delivered' || outcome.kind === 'failed') {
      const r = outcome.result;
      return { deliveryId: id, delivered: r.ok, status: r.status, error: r.error, durationMs: r.durationMs };
    }
    // The caller's key passed the same checks a moment ago; this is a race with a revocation or a removal.
    const why = outcome.kind === 'given_up' ? `given up before the attempt (${outcome.reason})` : 'not attempted';
    return { deliveryId: id, delivered: false, status: null, error: why, durationMs: 0 };
  }

  private async takeTurn(webhookId: string): Promise<void> {
    const key = `${this.config.redisPrefix}:webhook-test:${webhookId}`;
    let ttl: number;
    if (!this.outage.mayTry()) return;
    try {
      const taken = await this.redis.set(key, '1', 'PX', TEST_INTERVAL_MS, 'NX');
      this.outage.worked();
      if (taken === 'OK') return;
      ttl = await this.redis.pttl(key);
    } catch (err) {
      this.outage.failed(err);
      return;
    }
    const seconds = Math.max(1, Math.ceil((ttl > 0 ? ttl : TEST_INTERVAL_MS) / 1000));
    throw new DomainError('rate_limited', `This webhook was tested less than 5 seconds ago; test it again in ${seconds} s.`, {
      'Retry-After': String(seconds),
    });
  }
}
