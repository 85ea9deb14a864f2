import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { AddressPolicy, NOT_PUBLIC } from './address-policy';
import { HostResolver, ResolvedAddress } from './host-resolver';
import { answerClass, connectionErrorClass, ErrorClass, Exchange, Headers, RESPONSE_BODY_KEPT } from './model/exchange';
import { SIGNATURE_HEADER, signatureHeader } from './model/webhook-signature';
import { WebhookTls } from './webhook-tls';
import { parseWebhookUrl } from './model/webhook-url';

/** The contract's limit for the whole answer (status line, headers and body). */
export const ANSWER_TIMEOUT_MS = 10_000;
/** Pooled connection sets kept, one per (host name, pinned address); the least recently used goes first. */
const MAX_POOLS = 500;
/** Bodies of answers are read (and thrown away) up to this size; a larger one closes the connection. */
const ANSWER_BODY_LIMIT = 64 * 1024;
const USER_AGENT = 'integrations-webhooks/1.0';

export interface WebhookPost {
  url: string;
  /** The exact bytes sent and signed. */
  body: string;
  secret: string;
  /** A rotated-out secret still in its overlap: the header carries its signature after the current one's. */
  previousSecret?: string | null;
  /** Unix seconds of the signature. */
  timestamp: number;
}

export interface SendResult {
  ok: boolean;
  /** The status the address answered with; null when it did not answer. */
  status: number | null;
  error: string | null;
  durationMs: number;
  /** What was sent and what came back (the log keeps it with the attempt). */
  exchange: Exchange;
}

/** Always answers the one vetted address, so the connection goes where the check said it may. */
function pinnedLookup({ address, family }: ResolvedAddress): LookupFunction {
  return ((_host: string, options: { all?: boolean } | undefined, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as unknown as LookupFunction;
}

const explain = (err: unknown): string => {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const inner = e.cause?.message && e.cause.message !== e.message ? ` (${e.cause.message})` : '';
  return `${e.code ? `${e.code}: ` : ''}${e.message ?? String(err)}${inner}`.slice(0, 500);
};

interface Drained {
  /** The error that broke the body off, if any. */
  broken: unknown;
  /** Its first RESPONSE_BODY_KEPT bytes. */
  kept: Buffer;
  /** Bytes read (the whole body unless `stopped`). */
  read: number;
  /** Reading stopped at ANSWER_BODY_LIMIT: the connection was closed instead. */
  stopped: boolean;
}

/**
 * Reads an answer's body, keeping its first RESPONSE_BODY_KEPT bytes and throwing the rest away
 * (past ANSWER_BODY_LIMIT the connection is closed instead); resolves the error that broke it off,
 * if any, rather than rejecting.
 */
async function drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<Drained> {
  const chunks: Buffer[] = [];
  let kept = 0;
  let read = 0;
  const result = (broken: unknown, stopped: boolean): Drained => ({ broken, kept: Buffer.concat(chunks, kept), read, stopped });
  try {
    for await (const chunk of body) {
      read += chunk.length;
      if (kept < RESPONSE_BODY_KEPT) {
        const part = chunk.subarray(0, RESPONSE_BODY_KEPT - kept);
        chunks.push(part);
        kept += part.length;
      }
      if (read > ANSWER_BODY_LIMIT) {
        body.destroy();
        return result(null, true);
      }
    }
    return result(null, false);
  } catch (err) {
    return result(err, false);
  }
}

/** undici's answer headers as the log keeps them (names are lower case already). */
function answerHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const out: Headers = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name] = value;
  return out;
}

/**
 * POSTs a signed delivery body. The host name is looked up once per call and every address it
 * answers is checked against the address rule; if any is not allowed nothing is sent. The
 * connection is then pinned to the first address (undici's `connect.lookup`), while SNI and the
 * Host header stay the url's name. Redirects are never followed (a 3xx is a failure), and the
 * whole answer must arrive within 10 seconds.
 *
 * Connections are pooled per (host name, pinned address): a pool only ever connects to its one
 * address, which was vetted on this call, so reuse cannot reach an address the check did not pass.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookSender.name);
  private readonly pools = new Map<string, Agent>();

  constructor(
    private readonly resolver: HostResolver,
    private readonly policy: AddressPolicy,
    private readonly tls: WebhookTls,
  ) {}

  async send(post: WebhookPost): Promise<SendResult> {
    const started = performance.now();
    let exchange: Exchange = {
      requestHeaders: null,
      responseHeaders: null,
      responseBody: null,
      responseBodySize: null,
      responseBodyTruncated: false,
      errorClass: null,
    };
    const done = (ok: boolean, status: number | null, error: string | null, errorClass: ErrorClass | null): SendResult => ({
      ok,
      status,
      error,
      durationMs: Math.max(0, Math.round(performance.now() - started)),
      exchange: { ...exchange, errorClass },
    });

    let hostname: string;
    let host: string;
    let addresses: ResolvedAddress[];
    try {
      const target = parseWebhookUrl(post.url);
      hostname = target.hostname;
      host = new URL(post.url).host;
      addresses = target.ipLiteral
        ? [{ address: target.ipLiteral, family: target.ipLiteral.includes(':') ? 6 : 4 }]
        : await this.resolver.resolve(target.hostname);
    } catch (err) {
      return done(false, null, `could not resolve the url's host: ${explain(err)}; nothing was sent`, 'dns');
    }
    if (addresses.length === 0) return done(false, null, `${hostname} resolves to no address; nothing was sent`, 'dns');
    for (const a of addresses) {
      const problem = this.policy.problem(a.address);
      if (problem) {
        // The error is the organisation's to read: it says how the name resolves only to operators.
        this.logger.warn(`webhook host ${hostname} resolves to ${a.address}, ${problem}; nothing was sent`);
        return done(false, null, `${hostname} resolves to ${NOT_PUBLIC}; nothing was sent`, 'address_not_public');
      }
    }

    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      [SIGNATURE_HEADER.toLowerCase()]: signatureHeader(post.secret, post.timestamp, post.body, ...(post.previousSecret ? [post.previousSecret] : [])),
    };
    // What the receiver gets: these, and the two undici adds from the url and the body.
    exchange = { ...exchange, requestHeaders: { host, 'content-length': String(Buffer.byteLength(post.body)), ...headers } };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), ANSWER_TIMEOUT_MS);
    try {
      const res = await request(post.url, {
        method: 'POST',
        dispatcher: this.pool(hostname, addresses[0]),
        headers,
        body: post.body,
        signal: controller.signal,
      });
      const status = res.statusCode;
      const responseHeaders = answerHeaders(res.headers);
      // Not dump(): it swallows a connection that breaks mid-body, and such an answer did not arrive.
      const body = await drain(res.body);
      const declared = Number(res.headers['content-length']);
      exchange = {
        ...exchange,
        responseHeaders,
        responseBody: body.kept,
        responseBodySize: !body.stopped && !body.broken ? body.read : Number.isSafeInteger(declared) && declared >= 0 ? declared : null,
        responseBodyTruncated: body.read > RESPONSE_BODY_KEPT,
      };
      if (controller.signal.aborted) return done(false, null, `no answer within ${ANSWER_TIMEOUT_MS / 1000} seconds`, 'timeout');
      if (body.broken) {
        return done(false, status, `answered ${status}, then the connection broke before the answer's body ended: ${explain(body.broken)}`, 'connection_lost');
      }
      const failure = answerClass(status);
      if (!failure) return done(true, status, null, null);
      if (failure === 'redirect') return done(false, status, `answered ${status}, a redirect; redirects are not followed`, failure);
      return done(false, status, `answered ${status}`, failure);
    } catch (err) {
      if (controller.signal.aborted) return done(false, null, `no answer within ${ANSWER_TIMEOUT_MS / 1000} seconds`, 'timeout');
      // Connection errors quote the pinned address (`connect ECONNREFUSED 10.0.0.5:443`): the name stands in for it.
      return done(false, null, explain(err).split(addresses[0].address).join(hostname), connectionErrorClass(err));
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }

  private pool(hostname: string, address: ResolvedAddress): Agent {
    const key = `${this.tls.generation}|${hostname}|${address.address}`;
    const existing = this.pools.get(key);
    if (existing) {
      // Re-inserting keeps the Map in least-recently-used order.
      this.pools.delete(key);
      this.pools.set(key, existing);
      return existing;
    }
    const agent = new Agent({
      connect: { lookup: pinnedLookup(address), rejectUnauthorized: true, ca: this.tls.ca, timeout: ANSWER_TIMEOUT_MS },
      headersTimeout: ANSWER_TIMEOUT_MS,
      bodyTimeout: ANSWER_TIMEOUT_MS,
    });
    this.pools.set(key, agent);
    if (this.pools.size > MAX_POOLS) {
      const [oldestKey, oldest] = this.pools.entries().next().value as [string, Agent];
      this.pools.delete(oldestKey);
      oldest.close().catch(() => undefined);
    }
    return agent;
  }
}
