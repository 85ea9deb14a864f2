/**
 * What an attempt sent and what came back, as the delivery log keeps it: the request headers (the
 * body is the delivery's, the same for every attempt, and is not kept per attempt), the answer's
 * status and headers, the first RESPONSE_BODY_KEPT bytes of its body (marked when cut), and, when
 * the attempt failed, the class of the failure.
 */

/** The first this many bytes of an answer's body are kept; the rest is counted, not kept. */
export const RESPONSE_BODY_KEPT = 8 * 1024;

/**
 * Why an attempt failed, in one word a program can switch on:
 * - `dns`: the url's name could not be looked up, or resolves to no address; nothing was sent.
 * - `address_not_public`: the name resolves to an address that is not public; nothing was sent.
 * - `refused`: the address refused the connection.
 * - `tls`: the TLS handshake failed (an untrusted or expired certificate, a name it does not cover, no common protocol).
 * - `timeout`: no whole answer within 10 seconds.
 * - `redirect`: a 3xx answer (redirects are not followed).
 * - `status`: any other answer that is not 2xx.
 * - `connection_lost`: the connection broke before the whole answer came.
 * - `other`: anything else.
 */
export const ERROR_CLASSES = ['dns', 'address_not_public', 'refused', 'tls', 'timeout', 'redirect', 'status', 'connection_lost', 'other'] as const;
export type ErrorClass = (typeof ERROR_CLASSES)[number];

/** Header name → value; a header the answer repeats keeps every value, in order. */
export type Headers = Record<string, string | string[]>;

export interface Exchange {
  /** The headers sent (none when nothing was sent: the name did not resolve, or not to a public address). */
  requestHeaders: Headers | null;
  /** Null when there was no answer. */
  responseHeaders: Headers | null;
  /** The first RESPONSE_BODY_KEPT bytes of the answer's body; null when there was no answer. */
  responseBody: Buffer | null;
  /** The body's whole size when known (read to its end, or its Content-Length); null when unknown. */
  responseBodySize: number | null;
  /** True when the body was longer than what is kept. */
  responseBodyTruncated: boolean;
  errorClass: ErrorClass | null;
}

const TLS_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const LOST_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** The codes of an error and of its causes, outermost first (undici wraps the socket's error). */
function codes(err: unknown): string[] {
  const out: string[] = [];
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && typeof e === 'object' && depth < 5; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string') out.push(e.code);
  }
  return out;
}

/** The class of an error thrown while connecting or waiting for the answer. */
export function connectionErrorClass(err: unknown): ErrorClass {
  const all = codes(err);
  if (all.includes('ECONNREFUSED')) return 'refused';
  if (all.some((c) => TLS_CODES.has(c) || c.startsWith('ERR_SSL_') || c.startsWith('ERR_TLS_'))) return 'tls';
  if (all.some((c) => TIMEOUT_CODES.has(c))) return 'timeout';
  if (all.some((c) => LOST_CODES.has(c))) return 'connection_lost';
  return 'other';
}

/** The class of an answer that is not a success. */
export function answerClass(status: number): ErrorClass | null {
  if (status >= 200 && status < 300) return null;
  return status >= 300 && status < 400 ? 'redirect' : 'status';
}

const TEXT_TYPES = /^(text\/|application\/([\w.-]+\+)?(json|xml|x-www-form-urlencoded|javascript|ecmascript)\b)/i;

/**
 * A body as text when a person can read it: a content type that is text (or none), and valid UTF-8
 * without control characters other than white space. A cut body may end inside a character: that
 * character (at most 3 bytes) is dropped. Otherwise null: the body is shown as its size and type.
 */
export function bodyText(body: Buffer, contentType: string | undefined, truncated: boolean): string | null {
  if (contentType && !TEXT_TYPES.test(contentType.trim())) return null;
  let bytes = body;
  if (truncated) {
    let cont = 0;
    while (cont < 3 && cont < bytes.length && (bytes[bytes.length - 1 - cont] & 0xc0) === 0x80) cont++;
    const lead = bytes.length - 1 - cont;
    if (lead >= 0 && bytes[lead] >= 0xc0) {
      const need = bytes[lead] >= 0xf0 ? 4 : bytes[lead] >= 0xe0 ? 3 : 2;
      if (cont + 1 < need) bytes = bytes.subarray(0, lead);
    }
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text) ? null : text;
}

/** The first value of a header, by lower-case name. */
export function headerValue(headers: Headers | null, name: string): string | undefined {
  const v = headers?.[name];
  return Array.isArray(v) ? v[0] : v;
}
