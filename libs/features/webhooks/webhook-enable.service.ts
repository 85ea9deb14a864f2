import { Injectable } from '@nestjs/common';
import { Clock, validationFailed } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { DeliveryLogService, Recovery } from './delivery-log.service';
import { DELIVERY_RETENTION_DAYS } from './delivery-retention.service';
import { WebhookEntity } from './webhook.entity';
import { toWebhook, WEBHOOK_COLUMNS } from './webhook-rows';
import { WebhooksService } from './webhooks.service';

/** What switching a webhook back on did. */
export interface Enabling {
  webhook: WebhookEntity;
  /** True when this call switched it on; false when it was not switched off (nothing changed). */
  switchedOn: boolean;
  /** The given-up deliveries sent again, when a recovery time was given and the webhook was switched on. */
  recovery: Recovery | null;
}

/**
 * Switches a switched-off webhook back on: events are delivered to it again from now, and its
 * failing period starts afresh (`failing_since` cleared, so the three days count from its next
 * failure). With a time, the deliveries made since then that were given up are sent again (a new
 * series under their own id, as a recovery does). A webhook that is not switched off is left as it
 * is. Confined to the caller's connection: another connection's, a removed or an unknown webhook
 * is not found.
 */
@Injectable()
export class WebhookEnableService {
  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly webhooks: WebhooksService,
    private readonly log: DeliveryLogService,
  ) {}

  /** The checks of a recovery time: not in the future, and within the deliveries kept. */
  checkRecoverSince(since: Date, field = 'recover_since'): void {
    const now = this.clock.now().getTime();
    if (since.getTime() > now) throw validationFailed(field, 'must not be in the future');
    if (since.getTime() < now - DELIVERY_RETENTION_DAYS * 86_400_000) {
      throw validationFailed(field, `must be within the last ${DELIVERY_RETENTION_DAYS} days (deliveries are kept that long)`);
    }
  }

  async enable(connectionId: string, organisationId: string, webhookId: string, recoverSince?: Date): Promise<Enabling> {
    const current = await this.webhooks.get(connectionId, webhookId);
    if (recoverSince) this.checkRecoverSince(recoverSince);
    return this.tx.run(async (m) => {
      const [row] = await m.query(
        `WITH back AS (
           UPDATE webhooks SET switched_off_at = NULL, failing_since = NULL
            WHERE id = $1 AND connection_id = $2 AND deleted_at IS NULL AND switched_off_at IS NOT NULL
           RETURNING ${WEBHOOK_COLUMNS})
         SELECT * FROM back`,
        [current.id, connectionId],
      );
      if (!row) return { webhook: await this.webhooks.get(connectionId, webhookId), switchedOn: false, recovery: null };
      const recovery = recoverSince ? await this.log.recover(current.id, recoverSince, undefined, organisationId, ['given_up']) : null;
      return { webhook: toWebhook(row), switchedOn: true, recovery };
    });
  }
}
