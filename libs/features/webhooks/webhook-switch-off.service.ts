import { Injectable, Logger } from '@nestjs/common';
import { Clock, INTEGRATIONS_MANAGE, ORGANISATION_OWN } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { Mailer, MailMessage } from '@kernel/mail';
import { GIVE_UP_REASONS } from './model/give-up';
import { giveUpPending } from './webhook-rows';

/** A webhook failing this long without a success in between is switched off. */
export const SWITCH_OFF_AFTER_MS = 3 * 24 * 60 * 60 * 1000;
const BATCH = 100;

interface SwitchedOff {
  id: string;
  url: string;
  failing_since: Date;
  organisation_id: string;
  organisation_name: string;
  connection_name: string;
}

/**
 * Switches off webhooks whose attempts have been failing for three days (counted from the first
 * failure of an unbroken run; a success ends the run; tests never count), gives up their waiting
 * deliveries with that reason, and emails the organisation's integration managers once the change
 * has committed. Safe on several workers at once (SKIP LOCKED); a webhook is switched off once.
 */
@Injectable()
export class WebhookSwitchOffService {
  private readonly logger = new Logger(WebhookSwitchOffService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly mailer: Mailer,
  ) {}

  /** Returns how many webhooks were switched off. */
  async run(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.batch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  /** Active members whose group can manage integrations (or owns the organisation). */
  async integrationManagers(organisationId: string): Promise<Array<{ email: string; name: string }>> {
    return this.tx.manager.query(
      `SELECT p.email, p.name FROM people p JOIN groups g ON g.id = p.group_id
        WHERE p.organisation_id = $1 AND NOT p.disabled AND g.permissions && $2::text[]
        ORDER BY p.id`,
      [organisationId, [INTEGRATIONS_MANAGE, ORGANISATION_OWN]],
    );
  }

  private async batch(): Promise<number> {
    const now = this.clock.now();
    return this.tx.run(async (m) => {
      const switched: SwitchedOff[] = await m.query(
        `WITH due AS (
           SELECT id FROM webhooks
            WHERE failing_since <= $1 AND switched_off_at IS NULL AND deleted_at IS NULL
            ORDER BY failing_since LIMIT $3 FOR UPDATE SKIP LOCKED
         ), off AS (
           UPDATE webhooks w SET switched_off_at = $2 FROM due WHERE w.id = due.id
           RETURNING w.id, w.url, w.failing_since, w.organisation_id, w.connection_id
         )
         SELECT off.id, off.url, off.failing_since, off.organisation_id, o.name AS organisation_name, c.name AS connection_name
           FROM off JOIN organisations o ON o.id = off.organisation_id JOIN connections c ON c.id = off.connection_id`,
        [new Date(now.getTime() - SWITCH_OFF_AFTER_MS).toISOString(), now.toISOString(), BATCH],
      );
      for (const w of switched) {
        const given = await giveUpPending(m, String(w.id), GIVE_UP_REASONS.webhookSwitchedOff, now);
        const managers = await this.integrationManagers(String(w.organisation_id));
        this.logger.warn(`webhook ${w.id} switched off after failing since ${new Date(w.failing_since).toISOString()}; ${given} deliveries given up`);
        for (const person of managers) {
          const message = this.mail(person.email, w, now);
          await this.tx.afterCommit(() =>
            this.mailer.send(message).catch((err: Error) => this.logger.error(`switch-off mail to ${person.email} not sent: ${err.message}`)),
          );
        }
      }
      return switched.length;
    });
  }

  private mail(to: string, w: SwitchedOff, now: Date): MailMessage {
    return {
      to,
      subject: `Webhook switched off: ${w.url}`,
      text: [
        `Hello,`,
        ``,
        `A webhook of ${w.organisation_name} has been switched off because every delivery to it has failed for three days.`,
        ``,
        `Connection: ${w.connection_name}`,
        `Address: ${w.url}`,
        `Failing since: ${new Date(w.failing_since).toISOString()}`,
        `Switched off at: ${now.toISOString()}`,
        ``,
        `No further events are sent to it, and the deliveries that were waiting for an attempt were given up.`,
        `Each attempt, with its status and error, is listed on the connection's Webhooks page, where the`,
        `webhook can still be tested.`,
        ``,
      ].join('\n'),
    };
  }
}
