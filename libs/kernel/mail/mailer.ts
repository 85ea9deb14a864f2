import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@kernel/config';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createTransport, Transporter } from 'nodemailer';

/** How long a shutdown waits for the messages still being sent. */
const SHUTDOWN_DRAIN_MS = 10_000;

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/**
 * Outgoing mail through nodemailer: SMTP when SMTP_URL is set; otherwise each message is
 * written as an .eml file under DATA_DIR/mail and the log says where. SMTP connections are
 * pooled (nodemailer's pool: at most 20 open, each used for up to 100 messages and kept open
 * between them until the server or shutdown closes it) unless SMTP_URL says `pool=false`: a
 * connection, greeting and EHLO per message cost more than the message itself when SCIM
 * provisioning adds thousands of people.
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger(Mailer.name);
  private readonly transport: Transporter;
  /** Messages handed to the transport and not yet answered (queued in the pool or being sent). */
  private readonly sending = new Set<Promise<unknown>>();

  constructor(private readonly config: AppConfig) {
    this.transport = config.smtpUrl ? createTransport(pooled(config.smtpUrl)) : createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  }

  /** Waits (up to SHUTDOWN_DRAIN_MS) for the messages still queued or being sent, then closes the pool. */
  async onApplicationShutdown(): Promise<void> {
    if (this.sending.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const gaveUp = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), SHUTDOWN_DRAIN_MS)));
      const left = this.sending.size;
      if (await Promise.race([Promise.allSettled([...this.sending]).then(() => false), gaveUp])) {
        this.logger.error(`shutting down with ${this.sending.size} of ${left} messages still unsent after ${SHUTDOWN_DRAIN_MS} ms`);
      }
      clearTimeout(timer);
    }
    this.transport.close();
  }

  async send(message: MailMessage): Promise<void> {
    const sending = this.transport.sendMail({ from: this.config.mailFrom, ...message });
    this.sending.add(sending);
    const info = await sending.finally(() => this.sending.delete(sending));
    if (this.config.smtpUrl) return;
    const dir = resolve(this.config.dataDir, 'mail');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${info.messageId.replace(/[^A-Za-z0-9]/g, '')}.eml`);
    writeFileSync(file, (info as unknown as { message: Buffer }).message);
    this.logger.log(`no SMTP_URL: mail to ${message.to} written to ${file}`);
  }
}

/**
 * `url` with `pool=true&maxConnections=20` added unless its query sets `pool` itself (the rest
 * of it kept as written). 20, not nodemailer's 5: a message holds its connection for a round trip
 * of SMTP, so 5 connections would cap mail below what SCIM provisioning creates (the queue, in
 * memory, would grow); without a pool every message would open a connection of its own.
 */
function pooled(url: string): string {
  if (/[?&]pool=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}pool=true&maxConnections=20`;
}
