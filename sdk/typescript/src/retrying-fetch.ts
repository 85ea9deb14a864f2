import { randomUUID } from 'node:crypto';
import { IDEMPOTENT_POSTS } from './generated/idempotency.gen';

export interface RetryOptions {
  /** Further attempts after the first (default 3; 0 turns retries off). */
  retries?: number;
  /** The first backoff, doubled at each further attempt, with jitter (default 500 ms). */
  retryBaseDelayMs?: number;
  /** The longest wait before an attempt; a `Retry-After` beyond it ends the retries (default 30 s). */
  maxRetryDelayMs?: number;
  /** Makes each new `Idempotency-Key` (default: a random UUID). */
  idempotencyKey?: () => string;
}

type Fetch = (request: Request) => Promise<Response>;

const IDEMPOTENT = IDEMPOTENT_POSTS.map((template) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`));

/** Whether a POST to `url` takes an `Idempotency-Key`, by the path templates of the document. */
export function takesIdempotencyKey(url: string): boolean {
  const { pathname } = new URL(url);
  return IDEMPOTENT.some((re) => re.test(pathname));
}

/** Seconds or an HTTP date, as `Retry-After` carries them; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const sleep = (ms: number, signal?: AbortSignal | null) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

async function errorCode(response: Response): Promise<string | undefined> {
  try {
    return ((await response.clone().json()) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/**
 * A fetch that sets an `Idempotency-Key` on every POST that takes one (unless the caller set it)
 * and retries, with that same key:
 * - 429, after its `Retry-After` (nothing was done: every method);
 * - 5xx and network errors, with exponential backoff, for calls that are safe to repeat (every
 *   method but a POST without an `Idempotency-Key`: the API answers a repeat with the first answer);
 * - 409 `idempotency_key_in_use` (the first attempt is still being processed), with backoff.
 * The last answer (or network error) is given back once the attempts are spent.
 */
export function retryingFetch(fetchImpl: Fetch, options: RetryOptions = {}): Fetch {
  const retries = options.retries ?? 3;
  const base = options.retryBaseDelayMs ?? 500;
  const max = options.maxRetryDelayMs ?? 30_000;
  const newKey = options.idempotencyKey ?? randomUUID;
  const backoff = (attempt: number) => {
    const ceiling = Math.min(max, base * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  };

  return async (request: Request): Promise<Response> => {
    const headers = new Headers(request.headers);
    if (request.method === 'POST' && !headers.has('idempotency-key') && takesIdempotencyKey(request.url)) headers.set('idempotency-key', newKey());
    const keyed = headers.has('idempotency-key');
    const repeatable = request.method !== 'POST' || keyed;
    // The body is read once, so that every attempt sends the same bytes.
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const attempt = () => fetchImpl(new Request(request.url, { method: request.method, headers, body, signal: request.signal, redirect: request.redirect }));

    for (let n = 0; ; n++) {
      let response: Response | undefined;
      let failure: unknown;
      try {
        response = await attempt();
      } catch (err) {
        if (request.signal?.aborted) throw err;
        failure = err;
      }
      let wait: number | undefined;
      if (response === undefined) wait = repeatable ? backoff(n) : undefined;
      else if (response.status === 429) wait = retryAfterMs(response.headers.get('retry-after')) ?? backoff(n);
      else if (response.status >= 500) wait = repeatable ? backoff(n) : undefined;
      else if (response.status === 409 && keyed && (await errorCode(response)) === 'idempotency_key_in_use') wait = backoff(n);
      if (wait === undefined || n >= retries || wait > max) {
        if (response === undefined) throw failure;
        return response;
      }
      await response?.body?.cancel();
      await sleep(wait, request.signal);
    }
  };
}
