import { Injectable, Logger, Module } from '@nestjs/common';
import { PubSub } from './pub-sub';
import { AUTH_INVALIDATION_CHANNEL, AuthInvalidation } from '@kernel/core';
import { CoreModule, TransactionHost } from '@kernel/database';
import { RedisModule } from './redis.module';

/**
 * Announces a change to keys, connections or organisations to every replica once it has
 * committed, so in-process key caches drop what the change made stale.
 */
@Injectable()
export class AuthInvalidationPublisher {
  constructor(
    private readonly pubSub: PubSub,
    private readonly tx: TransactionHost,
  ) {}

  private readonly logger = new Logger(AuthInvalidationPublisher.name);

  /**
   * The change has committed by the time this runs, so a failed publish must not report the
   * change as failed. It is logged; replicas that missed it are either unsubscribed too (Redis
   * is down: their caches are cleared and bypassed) or drop the entry at its TTL.
   */
  async announce(change: AuthInvalidation): Promise<void> {
    await this.tx.afterCommit(() =>
      this.pubSub.publish(AUTH_INVALIDATION_CHANNEL, change).catch((err: Error) => {
        this.logger.error(`auth invalidation not published (${JSON.stringify(change)}): ${err.message}`);
      }),
    );
  }
}

/** The publisher, for the features whose changes invalidate cached keys (connections, keys, organisations). */
@Module({ imports: [CoreModule, RedisModule], providers: [AuthInvalidationPublisher], exports: [AuthInvalidationPublisher] })
export class AuthInvalidationModule {}
