import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { join, resolve } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';

/** Names the receiver's certificate covers besides 127.0.0.1 (tests make them resolve there). */
export const RECEIVER_DOMAIN = 'webhook.test';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: string;
  /** The TLS server name the client sent (SNI); null for an IP literal. */
  servername: string | null;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** The answer's body (default `ok`). */
  body?: string | Buffer;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Answer only once this settles: a receiver that hangs until the test lets it recover. */
  hold?: Promise<unknown>;
  /** Called when the exchange ends, answered or given up by the sender (counts requests in flight). */
  done?: () => void;
}

export interface ReceiverTls {
  cert: string;
  key: string;
  certFile: string;
}

/** A self-signed certificate for 127.0.0.1 and *.webhook.test, made once and kept under .data/test. */
export async function receiverTls(): Promise<ReceiverTls> {
  const dir = resolve(__dirname, '../../.data/test/webhook-receiver');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  if (!existsSync(certFile) || !existsSync(keyFile)) {
    const pems = await generate([{ name: 'commonName', value: `hooks.${RECEIVER_DOMAIN}` }], {
      keySize: 2048,
      days: 3650,
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: false },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: `hooks.${RECEIVER_DOMAIN}` },
            { type: 2, value: `*.${RECEIVER_DOMAIN}` },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    } as never);
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${keyFile}.tmp`, pems.private);
    writeFileSync(`${certFile}.tmp`, pems.cert);
    renameSync(`${keyFile}.tmp`, keyFile);
    renameSync(`${certFile}.tmp`, certFile);
  }
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}

/**
 * A real HTTPS webhook receiver on 127.0.0.1:443 (the contract allows port 443 only; tests run
 * as root here). It records every request and answers as told per path prefix (default 200).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly replies: Array<[prefix: string, reply: (r: ReceivedRequest) => Reply]> = [];
  private server?: Server;

  private constructor(readonly tls: ReceiverTls) {}

  static async start(port = 443): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(await receiverTls());
    await receiver.listen(port);
    return receiver;
  }

  get cert(): string {
    return this.tls.cert;
  }

  /** How to answer requests whose path starts with `prefix` (the latest rule wins). */
  reply(prefix: string, reply: Reply | ((r: ReceivedRequest) => Reply)): void {
    this.replies.unshift([prefix, typeof reply === 'function' ? reply : () => reply]);
  }

  received(prefix: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(prefix));
  }

  /** Waits until `count` requests under `prefix` have arrived; returns them. */
  async waitFor(prefix: string, count = 1, timeoutMs = 15_000): Promise<ReceivedRequest[]> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = this.received(prefix);
      if (got.length >= count) return got;
      if (Date.now() > until) throw new Error(`receiver: ${got.length} of ${count} requests under ${prefix} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  private async listen(port: number): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const server = createServer({ key: this.tls.key, cert: this.tls.cert }, (req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const servername = (req.socket as TLSSocket).servername;
          const r: ReceivedRequest = {
            method: req.method ?? '',
            path: req.url ?? '',
            headers: req.headers,
            raw: Buffer.concat(chunks).toString('utf8'),
            servername: servername ? String(servername) : null,
            at: Date.now(),
          };
          this.requests.push(r);
          const rule = this.replies.find(([prefix]) => r.path.startsWith(prefix));
          const reply = rule ? rule[1](r) : {};
          const answer = () => {
            if (res.destroyed) return;
            res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...(reply.headers ?? {}) });
            res.end(reply.body ?? 'ok');
          };
          if (reply.done) res.once('close', reply.done);
          if (reply.hold) void reply.hold.then(answer, answer);
          else if (reply.delayMs) setTimeout(answer, reply.delayMs);
          else answer();
        });
      });
      try {
        await new Promise<void>((ok, fail) => {
          server.once('error', fail);
          server.listen(port, '127.0.0.1', () => {
            server.off('error', fail);
            ok();
          });
        });
        server.keepAliveTimeout = 5000;
        this.server = server;
        return;
      } catch (err) {
        // Another spec's receiver may still be closing: port 443 is free again in a moment.
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
}
