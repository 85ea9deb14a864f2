import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import Redis from 'ioredis';
import { requireReady } from './redis-outage';
import { REDIS } from './redis.tokens';

type Handler = (message: unknown) => void;

/**
 * Redis publish/subscribe between replicas, channel names under the configured prefix.
 * `ready` is true only while the subscriber is connected and subscribed: anything that caches
 * on the strength of invalidation messages must not cache while it is false.
 */
@Injectable()
export class PubSub implements OnApplicationShutdown {
  private readonly logger = new Logger(PubSub.name);
  private subscriber?: Redis;
  private readonly handlers = new Map<string, Handler[]>();
  private readonly resetHandlers: Array<() => void> = [];
  private subscribed = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly config: AppConfig,
  ) {}

  get ready(): boolean {
    return this.subscribed && this.subscriber?.status === 'ready';
  }

  /**
   * Delivers `message` to this process's own subscribers at once, then to every replica through
   * Redis (this process hears it a second time then: handlers must be idempotent). The local
   * delivery is what makes a change made through this replica apply to its very next call,
   * without waiting for the round trip through Redis.
   */
  async publish(channel: string, message: unknown): Promise<void> {
    const name = this.name(channel);
    const raw = JSON.stringify(message);
    this.deliver(name, raw);
    // Not queued while Redis is away (the caller would wait): replicas that miss it are unsubscribed then too.
    requireReady(this.redis);
    await this.redis.publish(name, raw);
  }

  /** `onReset` runs whenever the subscription is (re)established: messages may have been missed. */
  async subscribe(channel: string, handler: Handler, onReset?: () => void): Promise<void> {
    const name = this.name(channel);
    this.handlers.set(name, [...(this.handlers.get(name) ?? []), handler]);
    if (onReset) this.resetHandlers.push(onReset);
    if (!this.subscriber) this.subscriber = this.createSubscriber();
    await this.subscriber.subscribe(name);
    this.subscribed = true;
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
  }

  private createSubscriber(): Redis {
    const sub = this.redis.duplicate({ connectionName: 'integrations-sub', enableAutoPipelining: false });
    sub.on('message', (channel: string, raw: string) => this.deliver(channel, raw));
    sub.on('close', () => {
      this.subscribed = false;
      this.resetHandlers.forEach((h) => h());
    });
    sub.on('ready', () => {
      // ioredis re-subscribes on reconnect (autoResubscribe); state may have changed meanwhile.
      this.subscribed = this.handlers.size > 0;
      this.resetHandlers.forEach((h) => h());
    });
    sub.on('error', (err) => this.logger.warn(`subscriber: ${err.message}`));
    return sub;
  }

  /** Each handler gets its own parsed copy, as it would from Redis. */
  private deliver(channel: string, raw: string): void {
    for (const h of this.handlers.get(channel) ?? []) {
      let message: unknown;
      try {
        message = JSON.parse(raw);
      } catch {
        return;
      }
      try {
        h(message);
      } catch (err) {
        this.logger.error(`handler for ${channel} failed: ${(err as Error).message}`);
      }
    }
  }

  private name(channel: string): string {
    return `${this.config.redisPrefix}:${channel}`;
  }
}
