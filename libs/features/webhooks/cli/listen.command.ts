import { Command, CommandContext } from '@kernel/cli';
import { AppConfig } from '@kernel/config';
import { DomainError } from '@kernel/core';
import { EVENT_SCOPES, SUBSCRIBABLE_EVENTS } from '@kernel/events';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request, Server } from 'node:https';
import { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { SIGNATURE_HEADER, verifySignature } from '../model/webhook-signature';

/**
 * `webhook listen`: a webhook receiver on this machine, for development. The contract allows only
 * https on port 443 at a public address, so the receiver listens on 127.0.0.1:443 with a certificate
 * that `npm run dev` makes and hands to the api and the worker (NODE_EXTRA_CA_CERTS), together with
 * an allowance for that one address (WEBHOOK_ALLOWED_PRIVATE_CIDRS). In production none of this
 * exists and the command refuses to run.
 */
export const LOCAL_RECEIVER = { host: '127.0.0.1', port: 443, cidr: '127.0.0.1/32', dir: 'webhook-receiver' } as const;

/** Where dev keeps the receiver's certificate and key, under DATA_DIR. */
export function localReceiverFiles(dataDir: string): { cert: string; key: string } {
  const dir = join(dataDir, LOCAL_RECEIVER.dir);
  return { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
}

/** The biggest body the receiver reads; deliveries are far smaller. */
const MAX_BODY_BYTES = 1024 * 1024;

interface ApiAnswer {
  status: number;
  body: { data?: Record<string, unknown>; error?: { code: string; message: string } } | null;
}

/** A reason the receiver cannot run, said to the developer as it is (exit 1). */
class ListenRefused extends DomainError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

/** One call to the api, trusting the certificate dev made for it (or the system's store). */
function callApi(api: URL, ca: Buffer | undefined, key: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, api),
      {
        method,
        ca,
        timeout: 15_000,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length, 'Idempotency-Key': randomUUID() } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: ApiAnswer['body'] = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {} // not JSON: the status says enough
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${api.origin} within 15 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const refusal = (what: string, a: ApiAnswer) =>
  new ListenRefused(`${what}: ${a.status} ${a.body?.error ? `${a.body.error.code}: ${a.body.error.message}` : ''}`.trim());

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('error', () => resolve(null));
    req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks) : null));
  });
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${LOCAL_RECEIVER.host}:${LOCAL_RECEIVER.port}`;
      if (err.code === 'EACCES') {
        reject(new ListenRefused(`port 443 needs privileges here: run as root, or allow it once with "sudo sysctl net.ipv4.ip_unprivileged_port_start=443"`));
      } else if (err.code === 'EADDRINUSE') {
        reject(new ListenRefused(`${where} is in use (another receiver?): stop it first`));
      } else reject(err);
    });
    server.listen(LOCAL_RECEIVER.port, LOCAL_RECEIVER.host, () => resolve());
  });
}

/** Resolves on the first SIGINT or SIGTERM (Ctrl-C), or when `stop` is called. */
function untilStopped(): { stopped: Promise<string>; stop: (why: string) => void } {
  let stop: (why: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    const on = (signal: string) => () => stop(signal);
    const handlers = { SIGINT: on('SIGINT'), SIGTERM: on('SIGTERM') };
    process.once('SIGINT', handlers.SIGINT).once('SIGTERM', handlers.SIGTERM);
    stop = (why) => {
      process.off('SIGINT', handlers.SIGINT).off('SIGTERM', handlers.SIGTERM);
      resolve(why);
    };
  });
  return { stopped, stop };
}

interface Options {
  config: AppConfig;
  key?: string;
  api?: string;
  /** Where each line goes as deliveries arrive. */
  write: (line: string) => void;
}

/** The demo key that `npm run dev` saved, when no --key is given. */
function demoKey(dataDir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8')) as { key?: string }).key;
  } catch {
    return undefined;
  }
}

/** Runs the receiver until Ctrl-C; answers what it received. Exported for the tests, which stop it with `stop`. */
export async function runListener(o: Options, control = untilStopped()): Promise<{ webhook_id: string; received: number; verified: number; removed: boolean }> {
  if (o.config.nodeEnv === 'production') {
    throw new ListenRefused('webhook listen is for development only and does not run with NODE_ENV=production');
  }
  const files = localReceiverFiles(o.config.dataDir);
  if (!existsSync(files.cert) || !existsSync(files.key)) {
    throw new ListenRefused(
      `no receiver certificate at ${files.cert}: start the product with "npm run dev" first (it makes one and tells the api and worker to trust it)`,
    );
  }
  const key = o.key ?? demoKey(o.config.dataDir);
  if (!key) throw new ListenRefused('no key: pass --key, or start "npm run dev" once (it saves the demo key)');
  const api = new URL(o.api ?? `https://127.0.0.1:${o.config.port}`);
  const devCert = join(o.config.dataDir, 'tls', 'localhost.crt');
  const ca = !o.config.tlsCertFile && existsSync(devCert) ? readFileSync(devCert) : undefined;

  const me = await callApi(api, ca, key, 'GET', '/v1/me').catch((err: Error) => {
    throw new ListenRefused(`the api at ${api.origin} did not answer (${err.message}): is "npm run dev" running?`);
  });
  if (me.status !== 200) throw refusal('GET /v1/me', me);
  const scopes = (me.body?.data?.scopes as string[] | undefined) ?? [];
  if (!scopes.includes('webhooks:manage')) throw new ListenRefused("this key's connection lacks the webhooks:manage scope");
  const events = SUBSCRIBABLE_EVENTS.filter((e) => scopes.includes(EVENT_SCOPES[e]));

  let secret = '';
  let received = 0;
  let verified = 0;
  const server = createServer({ cert: readFileSync(files.cert), key: readFileSync(files.key) }, (req, res) => {
    void readBody(req).then((body) => {
      const at = new Date().toISOString();
      if (req.method !== 'POST' || body === null) {
        res.writeHead(body === null ? 413 : 405).end();
        o.write(`${at}  ${req.method} ${req.url}: not a delivery (answered ${body === null ? 413 : 405})`);
        return;
      }
      received++;
      const header = req.headers[SIGNATURE_HEADER.toLowerCase()] as string | undefined;
      const ok = secret !== '' && verifySignature(header, body, secret);
      if (ok) verified++;
      let event = '(not JSON)';
      let shown = body.toString('utf8');
      try {
        const parsed = JSON.parse(shown) as { event?: string; id?: string };
        event = `${parsed.event ?? '?'} ${parsed.id ?? ''}`.trim();
        shown = JSON.stringify(parsed, null, 2);
      } catch {} // shown as received
      o.write(`${at}  ${event}  signature ${ok ? 'verified' : 'NOT valid (answered 400)'}`);
      o.write(shown.replace(/^/gm, '    '));
      res.writeHead(ok ? 200 : 400).end();
    });
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await listen(server);

  try {
    const url = `https://${LOCAL_RECEIVER.host}/webhooks/${randomUUID()}`;
    const made = await callApi(api, ca, key, 'POST', '/v1/webhooks', { url, events });
    if (made.status !== 201) throw refusal('POST /v1/webhooks', made);
    const webhook = made.body!.data as { id: string; secret: string };
    secret = webhook.secret;
    o.write(`Listening on ${url}`);
    o.write(`Webhook ${webhook.id} (connection ${String(me.body?.data?.id)}) receives: ${events.join(', ')}`);
    o.write(`Each delivery is printed here with its signature checked. Ctrl-C removes the webhook and stops.`);
    o.write(`A test event: POST ${api.origin}/v1/webhooks/${webhook.id}/test (or the webhook's page in the Integrations section).`);

    await control.stopped;
    const removed = await callApi(api, ca, key, 'DELETE', `/v1/webhooks/${webhook.id}`).then(
      (a) => a.status === 204 || a.status === 404,
      () => false,
    );
    if (!removed) o.write(`Could not remove webhook ${webhook.id}: remove it with DELETE /v1/webhooks/${webhook.id}`);
    return { webhook_id: webhook.id, received, verified, removed };
  } finally {
    control.stop('done');
    await new Promise((r) => server.close(r));
    server.closeAllConnections();
  }
}

export const LISTEN_COMMAND: Command = {
  words: ['webhook', 'listen'],
  usage: '[--key KEY] [--api URL]',
  summary:
    "development only: receive webhooks on this machine (https://127.0.0.1/…, trusted by npm run dev's api and worker), print each delivery with its signature checked; Ctrl-C removes the webhook",
  options: ['key', 'api'],
  arity: 0,
  async run(ctx: CommandContext) {
    const r = await runListener({
      config: ctx.config,
      key: ctx.args.option('key'),
      api: ctx.args.option('api'),
      write: (line) => process.stderr.write(`${line}\n`),
    });
    return {
      json: r,
      text: [`stopped: ${r.received} deliveries received, ${r.verified} verified; webhook ${r.webhook_id} ${r.removed ? 'removed' : 'NOT removed'}`],
    };
  },
};
