import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { TransactionHost } from '@kernel/database';
import { Mailer, MailMessage } from '@kernel/mail';

/**
 * The emails of adding people. Each is sent only once the outermost transaction has committed
 * (a rolled-back add sends nothing), and a failure to send is logged, not answered: the change
 * is already committed, and the invitation can be withdrawn and made again.
 */
@Injectable()
export class PeopleMail {
  private readonly logger = new Logger(PeopleMail.name);

  constructor(
    private readonly tx: TransactionHost,
    private readonly mailer: Mailer,
    private readonly config: AppConfig,
  ) {}

  /** The accept page's address for a token. */
  acceptUrl(token: string): string {
    return `${this.config.publicBaseUrl}/invitations/accept?token=${token}`;
  }

  welcome(to: string, organisationName: string): Promise<void> {
    return this.afterCommit({
      to,
      subject: `You have been added to ${organisationName}`,
      text: [
        `Hello,`,
        ``,
        `You have been added to ${organisationName} on the interpreting platform.`,
        `Sign in with ${to} at:`,
        ``,
        this.config.memberAppBaseUrl,
        ``,
      ].join('\n'),
    });
  }

  invitation(to: string, organisationName: string, token: string, expiresAt: Date): Promise<void> {
    return this.afterCommit({
      to,
      subject: `Invitation to join ${organisationName}`,
      text: [
        `Hello,`,
        ``,
        `You are invited to join ${organisationName} on the interpreting platform.`,
        `Open this link to accept the invitation:`,
        ``,
        this.acceptUrl(token),
        ``,
        `The link works once and expires at ${expiresAt.toISOString()}.`,
        `If you did not expect this invitation, ignore this email.`,
        ``,
      ].join('\n'),
    });
  }

  // Sent in the background: an answer never waits on the SMTP server (a slow one would otherwise
  // hold every add, and SCIM provisioning adds thousands). A failure is logged with the address.
  private afterCommit(message: MailMessage): Promise<void> {
    return this.tx.afterCommit(() => {
      this.mailer.send(message).catch((err: Error) => {
        this.logger.error({ err, to: message.to, subject: message.subject }, `could not send "${message.subject}"`);
      });
    });
  }
}
