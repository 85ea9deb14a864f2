import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  to: string[];
  /** The raw message as received. */
  raw: string;
  subject: string;
  /** The body with quoted-printable soft breaks and escapes undone (enough for ASCII text). */
  text: string;
}

const decodeQuotedPrintable = (s: string) => s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** A real SMTP server in process on 127.0.0.1 (no TLS, no auth) that keeps what it receives. */
export class MailCatcher {
  readonly mails: CaughtMail[] = [];
  private readonly server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const [head, ...body] = raw.split(/\r?\n\r?\n/);
        const subject = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
        const to = session.envelope.rcptTo.map((r) => r.address.toLowerCase());
        this.mails.push({ to, raw, subject, text: decodeQuotedPrintable(body.join('\n\n')) });
        callback();
      });
    },
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `smtp://127.0.0.1:${(this.server.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  to(address: string): CaughtMail[] {
    return this.mails.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** Every mail to `address` once there are `count` of them (mail is sent after the answer). */
  async waitForCount(address: string, count: number, ms = 5000): Promise<CaughtMail[]> {
    const until = Date.now() + ms;
    while (this.to(address).length < count) {
      if (Date.now() > until) throw new Error(`${this.to(address).length} mails to ${address} within ${ms} ms, expected ${count}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.to(address);
  }

  /** The first mail to `address`, waiting up to `ms` for it. */
  async waitFor(address: string, ms = 5000): Promise<CaughtMail> {
    const until = Date.now() + ms;
    for (;;) {
      const found = this.to(address)[0];
      if (found) return found;
      if (Date.now() > until) throw new Error(`no mail to ${address} within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
