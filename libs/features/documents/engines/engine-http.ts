import { request } from 'undici';
import { TranslationEngineError } from './translation-engine';

export interface EngineCall {
  engine: string;
  method: 'GET' | 'POST';
  url: string;
  headers?: Record<string, string>;
  body?: string;
  /** Of the body; JSON unless said otherwise. */
  contentType?: string;
  timeoutMs: number;
}

/** Statuses worth trying again: rate limits, timeouts, the engine's own trouble. */
const transientStatus = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/** The engine's own words about a refusal, as far as its error body carries any. */
function engineMessage(text: string): string {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const found = body.error ?? body.message ?? body.explanation ?? body.detail;
    if (typeof found === 'string') return found;
    if (found && typeof found === 'object' && typeof (found as { message?: unknown }).message === 'string') return (found as { message: string }).message;
  } catch {
    // not JSON: the text itself, shortened below
  }
  return text.replace(/\s+/g, ' ').trim();
}

const shorten = (s: string, max = 300) => (s.length > max ? `${s.slice(0, max)}…` : s);

/**
 * The largest engine answer read. The translation of the longest text a document may have
 * (DOCUMENT_MAX_TEXT_CHARS: 100,000 characters by default, 10 million at most) fits well within it;
 * an answer that keeps streaming past it is the engine's fault, not a reason to run out of memory.
 */
export const ENGINE_ANSWER_LIMIT_BYTES = 64 * 1024 * 1024;

/** The answer's body as text, or an error once it passes ENGINE_ANSWER_LIMIT_BYTES (the connection is closed). */
async function readLimited(body: AsyncIterable<Buffer> & { destroy(): unknown }, engine: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > ENGINE_ANSWER_LIMIT_BYTES) {
      body.destroy();
      throw new TranslationEngineError(`${engine} answered more than ${ENGINE_ANSWER_LIMIT_BYTES / 1024 / 1024} MB; the answer was not read.`, false);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * One JSON call to an engine, with its failures classified: no answer or a 408/429/5xx is
 * transient (retried with backoff), any other refusal is permanent and carries the engine's message.
 */
export async function callEngine<T>(call: EngineCall): Promise<T> {
  let status: number;
  let text: string;
  try {
    const res = await request(call.url, {
      method: call.method,
      headers: { accept: 'application/json', ...(call.body !== undefined ? { 'content-type': call.contentType ?? 'application/json' } : {}), ...call.headers },
      body: call.body,
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
    });
    status = res.statusCode;
    text = await readLimited(res.body, call.engine);
  } catch (err) {
    if (err instanceof TranslationEngineError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new TranslationEngineError(`${call.engine} could not be reached at ${new URL(call.url).origin}: ${e.code ?? e.message}.`, false);
  }
  if (status < 200 || status >= 300) {
    const said = shorten(engineMessage(text));
    throw new TranslationEngineError(`${call.engine} answered ${status}${said ? `: ${said}` : ''}`, !transientStatus(status));
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TranslationEngineError(`${call.engine} answered ${status} with a body that is not JSON.`, false);
  }
}
