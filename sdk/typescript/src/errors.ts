/**
 * An error answer of the API: its HTTP status and the `code` and `message` of its
 * `{error: {code, message}}` envelope. `requestId` is the answer's `X-Request-Id`, to quote to support.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
  }

  /** The error of an answer, from the body the client already parsed (JSON, or text when not JSON). */
  static from(response: Response, body: unknown): ApiError {
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof error?.code === 'string' ? error.code : `http_${response.status}`;
    const message =
      typeof error?.message === 'string' ? error.message : typeof body === 'string' && body !== '' ? body : response.statusText || `HTTP ${response.status}`;
    return new ApiError(response.status, code, message, response.headers.get('x-request-id') ?? undefined);
  }
}
