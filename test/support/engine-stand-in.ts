import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';

/** What the stand-in received: the engine's path, headers and parsed body. */
export interface EngineRequest {
  protocol: 'libretranslate' | 'deepl' | 'apertium-apy';
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

export interface Failure {
  status: number;
  body: unknown;
}

/** The stand-in's "translation": upper case, so that a test can see what was translated and what was not. */
export const standInTranslate = (text: string): string => text.toUpperCase();

/**
 * A real HTTP server speaking the request and answer shapes of LibreTranslate
 * (`POST /translate` JSON), DeepL (`POST /v2/translate` with `Authorization: DeepL-Auth-Key`)
 * and apertium-apy (`POST /translate` form-encoded). It checks what it receives the way the
 * engines do (400 for a missing field, 403 for a wrong key), records every request, and can be
 * told to fail. Its translation is `standInTranslate`.
 */
export class EngineStandIn {
  readonly requests: EngineRequest[] = [];
  /** Answers for the next calls, in order, before translating again. */
  readonly failures: Failure[] = [];
  /** Answer every call with this (until cleared). */
  failAlways: Failure | null = null;
  deeplKey = 'stand-in-key:fx';
  private server?: Server;

  get url(): string {
    const { port } = this.server!.address() as AddressInfo;
    return `http://127.0.0.1:${port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const type = (req.headers['content-type'] ?? '').split(';')[0];
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const path = (req.url ?? '').split('?')[0];

    if (req.method === 'POST' && path === '/translate' && type === 'application/x-www-form-urlencoded') {
      const form = Object.fromEntries(new URLSearchParams(raw));
      this.requests.push({ protocol: 'apertium-apy', path, headers: req.headers, body: form });
      const failure = this.nextFailure();
      if (failure) return send(failure.status, failure.body);
      if (!form.langpair || !/^[a-z]{3}\|[a-z]{3}$/.test(form.langpair) || form.q === undefined) {
        return send(400, { status: 'error', code: 400, message: 'Bad Request', explanation: 'Missing or bad langpair or q' });
      }
      return send(200, { responseData: { translatedText: standInTranslate(form.q) }, responseDetails: null, responseStatus: 200 });
    }

    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(400, { error: 'Invalid JSON' });
    }

    if (req.method === 'POST' && path === '/translate') {
      this.requests.push({ protocol: 'libretranslate', path, headers: req.headers, body });
      const failure = this.nextFailure();
      if (failure) return send(failure.status, failure.body);
      const { q, source, target, format } = body as { q?: unknown; source?: unknown; target?: unknown; format?: unknown };
      if (q === undefined) return send(400, { error: 'Invalid request: missing q parameter' });
      if (typeof source !== 'string' || !source) return send(400, { error: 'Invalid request: missing source parameter' });
      if (typeof target !== 'string' || !target) return send(400, { error: 'Invalid request: missing target parameter' });
      if (format !== 'text' && format !== 'html') return send(400, { error: `${String(format)} format is not supported` });
      if (Array.isArray(q)) return send(200, { translatedText: q.map((t) => standInTranslate(String(t))) });
      return send(200, { translatedText: standInTranslate(String(q)) });
    }

    if (req.method === 'POST' && path === '/v2/translate') {
      this.requests.push({ protocol: 'deepl', path, headers: req.headers, body });
      if (req.headers.authorization !== `DeepL-Auth-Key ${this.deeplKey}`) return send(403, { message: 'Wrong endpoint or authentication key.' });
      const failure = this.nextFailure();
      if (failure) return send(failure.status, failure.body);
      const { text, target_lang: target } = body as { text?: unknown; target_lang?: unknown };
      if (!Array.isArray(text) || text.length === 0 || text.length > 50) return send(400, { message: "Parameter 'text' not specified." });
      if (typeof target !== 'string' || !/^[A-Z]{2}(-[A-Z]{2,4})?$/.test(target)) return send(400, { message: "Value for 'target_lang' not supported." });
      return send(200, { translations: text.map((t) => ({ detected_source_language: 'EN', text: standInTranslate(String(t)) })) });
    }

    send(404, { error: 'Not Found' });
  }

  private nextFailure(): Failure | null {
    return this.failures.shift() ?? this.failAlways;
  }
}
