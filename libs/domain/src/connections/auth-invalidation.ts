import { Injectable, Logger } from '@nestjs/common';
import { PubSub } from '@app/redis';
import { AUTH_INVALIDATION_CHANNEL, AuthInvalidation, TransactionHost } from '@app/core';

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
