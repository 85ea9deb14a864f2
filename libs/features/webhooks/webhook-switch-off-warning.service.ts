import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '@kernel/core';
import { AppConfig } from '@kernel/config';
import { TransactionHost } from '@kernel/database';
import { Mailer, MailMessage } from '@kernel/mail';
import { SWITCH_OFF_AFTER_MS, WebhookSwitchOffService } from './webhook-switch-off.service';

/** A webhook failing this long without a success in between is warned about, once per failing period. */
export const WARN_AFTER_MS = 24 * 60 * 60 * 1000;
const BATCH = 100;

interface Warned {
  id: string;
  url: string;
  failing_since: Date;
  organisation_id: string;
  connection_id: string;
  organisation_name: string;
  connection_name: string;
}

/**
 * Warns the organisation's integration managers (the switch-off mail's recipients) when a webhook
 * has been failing for 24 hours: when it will be switched off, and where its deliveries are. Once
 * per failing period: the period is the webhook's `failing_since`, and a row per (webhook, period)
 * remembers the warning, so a webhook that recovers and fails again later is warned again. Safe on
 * several workers at once: rows another worker holds are skipped, and the row's primary key lets
 * only one insert win. A webhook already due for the switch-off gets that mail instead.
 */
@Injectable()
export class WebhookSwitchOffWarningService {
  private readonly logger = new Logger(WebhookSwitchOffWarningService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
    private readonly switchOff: WebhookSwitchOffService,
  ) {}

  /** Returns how many webhooks were warned about. */
  async run(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.batch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  private async batch(): Promise<number> {
    const now = this.clock.now();
    return this.tx.run(async (m) => {
      const warned: Warned[] = await m.query(
        `WITH due AS (
           SELECT w.id, w.failing_since FROM webhooks w
            WHERE w.failing_since <= $1 AND w.failing_since > $2 AND w.switched_off_at IS NULL AND w.deleted_at IS NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_switch_off_warnings s WHERE s.webhook_id = w.id AND s.failing_since = w.failing_since)
            ORDER BY w.failing_since LIMIT $4 FOR UPDATE OF w SKIP LOCKED
         ), sent AS (
           INSERT INTO webhook_switch_off_warnings (webhook_id, failing_since, sent_at)
           SELECT id, failing_since, $3 FROM due
           ON CONFLICT DO NOTHING
           RETURNING webhook_id
         )
         SELECT w.id, w.url, w.failing_since, w.organisation_id, w.connection_id, o.name AS organisation_name, c.name AS connection_name
           FROM sent JOIN webhooks w ON w.id = sent.webhook_id
           JOIN organisations o ON o.id = w.organisation_id JOIN connections c ON c.id = w.connection_id`,
        [new Date(now.getTime() - WARN_AFTER_MS).toISOString(), new Date(now.getTime() - SWITCH_OFF_AFTER_MS).toISOString(), now.toISOString(), BATCH],
      );
      for (const w of warned) {
        const managers = await this.switchOff.integrationManagers(String(w.organisation_id));
        this.logger.warn(`webhook ${w.id} failing since ${new Date(w.failing_since).toISOString()}; ${managers.length} managers warned`);
        for (const person of managers) {
          const message = this.mail(person.email, w);
          await this.tx.afterCommit(() =>
            this.mailer.send(message).catch((err: Error) => this.logger.error(`switch-off warning to ${person.email} not sent: ${err.message}`)),
          );
        }
      }
      return warned.length;
    });
  }

  /** The console's deliveries page of the webhook, as an absolute address. */
  deliveriesUrl(w: { id: string; connection_id: string }): string {
    return `${this.config.publicBaseUrl}/console/connections/${w.connection_id}/webhooks/${w.id}/deliveries`;
  }

  private mail(to: string, w: Warned): MailMessage {
    const since = new Date(w.failing_since);
    const off = new Date(since.getTime() + SWITCH_OFF_AFTER_MS);
    return {
      to,
      subject: `Webhook failing: ${w.url}`,
      text: [
        `Hello,`,
        ``,
        `Every delivery to a webhook of ${w.organisation_name} has failed for 24 hours.`,
        ``,
        `Connection: ${w.connection_name}`,
        `Address: ${w.url}`,
        `Failing since: ${since.toISOString()}`,
        `To be switched off at: ${off.toISOString()} (three days after the first failure), unless a delivery succeeds before then.`,
        ``,
        `Once switched off, no further events are sent to it and the deliveries waiting for an attempt are given up.`,
        `Its deliveries, each attempt with what was sent and what came back, are listed here:`,
        `${this.deliveriesUrl(w)}`,
        ``,
        `When the receiver works again, its failed deliveries can be sent again from that page, or over the API.`,
        ``,
      ].join('\n'),
    };
  }
}
