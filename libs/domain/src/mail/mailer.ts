import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createTransport, Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing mail through nodemailer: SMTP when SMTP_URL is set; otherwise each message is
 * written as an .eml file under DATA_DIR/mail and the log says where.
 */
@Injectable()
export class Mailer {
  private readonly logger = new Logger(Mailer.name);
  private readonly transport: Transporter;

  constructor(private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? createTransport(config.smtpUrl) : createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  async send(message: MailMessage): Promise<void> {
    const info = await this.transport.sendMail({ from: this.config.mailFrom, ...message });
    if (this.config.smtpUrl) return;
    const dir = resolve(this.config.dataDir, 'mail');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^A-Za-z0-9]/g, '')}.eml`);
    writeFileSync(file, (info as unknown as { message: Buffer }).message);
    this.logger.log(`no SMTP_URL: mail to ${message.to} written to ${file}`);
  }
}
