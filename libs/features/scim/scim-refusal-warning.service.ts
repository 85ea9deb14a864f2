import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { Clock, INTEGRATIONS_MANAGE, ORGANISATION_OWN } from '@kernel/core';
import { TransactionHost } from '@kernel/database';
import { Mailer, MailMessage } from '@kernel/mail';
import { REFUSAL_MINIMUM, REFUSAL_SHARE, WRITE_OPERATIONS } from './model/provisioning-event';

/** The window whose SCIM writes are counted. */
export const REFUSAL_WINDOW_MS = 60 * 60 * 1000;
/** A connection is warned about at most once in this long. */
export const REFUSAL_WARNING_EVERY_MS = 24 * 60 * 60 * 1000;
/** The commonest refusals a warning lists. */
export const TOP_REFUSALS = 5;

interface Due {
  connection_id: string;
  connection_name: string;
  organisation_id: string;
  organisation_name: string;
  writes: number;
  refused: number;
}

interface CommonRefusal {
  status: number;
  scim_type: string | null;
  n: number;
  example: string | null;
}

/**
 * Warns the organisation's integration managers (and owners) before an identity provider gives up
 * on a connection (Entra quarantines an application whose operations keep failing): when more
 * than a fifth of the connection's SCIM writes in the last hour were refused, and at least 20
 * were, a mail with the commonest refusals and a link to the provisioning log. At most once a day
 * per connection: one upsert per connection claims the day (it moves `sent_at` only when the last
 * warning is a day old), so two workers never both send it.
 */
@Injectable()
export class ScimRefusalWarningService {
  private readonly logger = new Logger(ScimRefusalWarningService.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly clock: Clock,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
  ) {}

  /** Returns how many connections were warned about. */
  async run(): Promise<number> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - REFUSAL_WINDOW_MS).toISOString();
    return this.tx.run(async (m) => {
      const due: Due[] = await m.query(
        `WITH hour AS (
           SELECT connection_id, count(*)::int AS writes, count(*) FILTER (WHERE outcome = 'refused')::int AS refused
             FROM provisioning_events
            WHERE created_at > $1 AND created_at <= $2 AND operation = ANY ($3::text[])
            GROUP BY connection_id
         ), alarming AS (
           SELECT * FROM hour WHERE refused >= $4 AND refused > writes * $5::numeric
         ), claimed AS (
           INSERT INTO scim_refusal_warnings AS w (connection_id, sent_at)
           SELECT connection_id, $2 FROM alarming
           ON CONFLICT (connection_id) DO UPDATE SET sent_at = EXCLUDED.sent_at WHERE w.sent_at <= $6
           RETURNING connection_id
         )
         SELECT a.connection_id, c.name AS connection_name, c.organisation_id, o.name AS organisation_name, a.writes, a.refused
           FROM claimed JOIN alarming a ON a.connection_id = claimed.connection_id
           JOIN connections c ON c.id = a.connection_id JOIN organisations o ON o.id = c.organisation_id`,
        [since, now.toISOString(), [...WRITE_OPERATIONS], REFUSAL_MINIMUM, REFUSAL_SHARE, new Date(now.getTime() - REFUSAL_WARNING_EVERY_MS).toISOString()],
      );
      for (const d of due) {
        const common: CommonRefusal[] = await m.query(
          `SELECT status, scim_type, count(*)::int AS n, (array_agg(detail ORDER BY created_at DESC))[1] AS example
             FROM provisioning_events
            WHERE connection_id = $1 AND created_at > $2 AND created_at <= $3 AND outcome = 'refused' AND operation = ANY ($4::text[])
            GROUP BY status, scim_type ORDER BY n DESC, status LIMIT $5`,
          [d.connection_id, since, now.toISOString(), [...WRITE_OPERATIONS], TOP_REFUSALS],
        );
        const managers: Array<{ email: string }> = await m.query(
          `SELECT p.email FROM people p JOIN groups g ON g.id = p.group_id
            WHERE p.organisation_id = $1 AND NOT p.disabled AND g.permissions && $2::text[] ORDER BY p.id`,
          [d.organisation_id, [INTEGRATIONS_MANAGE, ORGANISATION_OWN]],
        );
        this.logger.warn(`SCIM connection ${d.connection_id}: ${d.refused} of ${d.writes} writes refused in the last hour; ${managers.length} managers warned`);
        for (const person of managers) {
          const message = this.mail(person.email, d, common);
          await this.tx.afterCommit(() =>
            this.mailer.send(message).catch((err: Error) => this.logger.error(`SCIM refusal warning to ${person.email} not sent: ${err.message}`)),
          );
        }
      }
      return due.length;
    });
  }

  /** The console's provisioning log, the connection's refusals. */
  logUrl(connectionId: string): string {
    return `${this.config.publicBaseUrl}/console/scim/log?connection=${connectionId}&outcome=refused`;
  }

  private mail(to: string, d: Due, common: CommonRefusal[]): MailMessage {
    const share = Math.round((100 * d.refused) / d.writes);
    return {
      to,
      subject: `SCIM provisioning failing: ${d.connection_name}`,
      text: [
        `Hello,`,
        ``,
        `In the last hour, ${d.refused} of the ${d.writes} SCIM changes the identity provider sent through the connection "${d.connection_name}" of ${d.organisation_name} were refused (${share}%).`,
        `Identity providers stop provisioning when too many operations fail: Microsoft Entra ID puts the application in quarantine, and Okta stops retrying, until someone acts.`,
        ``,
        `The commonest refusals:`,
        ...common.map((c) => `- ${c.status}${c.scim_type ? ` ${c.scim_type}` : ''}: ${c.n} times${c.example ? `, for example: ${c.example}` : ''}`),
        ``,
        `Every refusal, with what was asked and why it was refused, is in the provisioning log:`,
        this.logUrl(d.connection_id),
        ``,
        `This warning is sent at most once a day per connection.`,
        ``,
      ].join('\n'),
    };
  }
}
