import './fetch-types';
import { createClient, createConfig, type Client } from './generated/client';
import { IntegrationsApi } from './generated/sdk.gen';
import { ApiError } from './errors';
import { retryingFetch, type RetryOptions } from './retrying-fetch';

export interface IntegrationsOptions extends RetryOptions {
  /** The API's address, e.g. `https://api.example.org` (without `/v1`). */
  baseUrl: string;
  /** The connection's key, `svc_…`, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The fetch to send with (default: the global one); each attempt goes through it. */
  fetch?: (request: Request) => Promise<Response>;
}

/** A page of a list call: its items and the cursor of the next page (null on the last). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * The API's calls (one method per operation of the description, generated), sent with the key,
 * an `Idempotency-Key` on each POST that takes one, and retries; an error answer throws ApiError.
 */
export class Integrations extends IntegrationsApi {
  constructor(options: IntegrationsOptions) {
    super({ client: Integrations.client(options) });
  }

  /** The configured fetch client the generated calls use (for calls made with `client` directly). */
  get http(): Client {
    return this.client;
  }

  private static client(options: IntegrationsOptions): Client {
    const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
    const client = createClient(
      createConfig({
        baseUrl: options.baseUrl.replace(/\/+$/, ''),
        auth: () => options.apiKey,
        throwOnError: true,
        fetch: retryingFetch(send, options) as typeof fetch,
      }),
    );
    client.interceptors.error.use((error, response) => (response ? ApiError.from(response, error) : error));
    return client;
  }

  /**
   * Every item of a list call, page after page, following `next_cursor` until it is null.
   * `page(cursor)` asks for one page: the first with `cursor` undefined, e.g.
   * `api.paginate((cursor) => api.listUsers({ query: { limit: 100, cursor } }))`.
   */
  async *paginate<T>(page: (cursor: string | undefined) => Promise<{ data: Page<T> }>): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    do {
      const { data } = await page(cursor);
      yield* data.data;
      cursor = data.next_cursor ?? undefined;
    } while (cursor !== undefined);
  }
}
