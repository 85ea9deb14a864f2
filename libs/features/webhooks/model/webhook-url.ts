import { isIP } from 'node:net';
import { validationFailed } from '@kernel/core';

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/**
 * parseWebhookUrl's rules that a JSON Schema pattern can state (for the OpenAPI description), a
 * little stricter than the code (an ASCII host name, port written as 443 or not at all): https,
 * a host, no user name or password, no other port, no fragment, no space, backslash, control
 * character or other ASCII character a URL carries only percent-encoded: " < > ^ ` { | }.
 * Not stated: whether the host is a public address, and what makes a bracketed IPv6 literal valid.
 */
export const WEBHOOK_URL_PATTERN =
  '^[Hh][Tt][Tt][Pp][Ss]://(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9][A-Za-z0-9.-]*)(:443)?([/?][^\\\\#\\s\\u0000-\\u001f\\u007f"<>^`{|}]*)?$';

export interface WebhookTarget {
  /** The host name as written in the url (lowercase, no brackets, no trailing dot). */
  hostname: string;
  /** The address when the url names an IP literal; null for a name. */
  ipLiteral: string | null;
}

/**
 * The url rules that need no lookup: an absolute https url on port 443, no user name or
 * password, no fragment, and not `localhost`. The WHATWG parser normalises odd IPv4 spellings
 * (`2130706433`, `0x7f.1`) to dotted form first, so they are judged as the address they are.
 */
export function parseWebhookUrl(input: string): WebhookTarget {
  if (typeof input !== 'string' || input.trim() === '') throw validationFailed('url', 'must not be blank');
  if (input.length > WEBHOOK_URL_MAX_LENGTH) throw validationFailed('url', `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw validationFailed('url', 'must be an absolute https URL');
  }
  if (url.protocol !== 'https:') throw validationFailed('url', 'must use https');
  // The url is kept as written, so it must be written as the parser reads it: the WHATWG parser
  // would also take `https:host`, `https:///host` or `https://@host` (and trim spaces), which
  // would then be stored in a form that says something else.
  if (/\s/.test(input)) throw validationFailed('url', 'must not contain spaces');
  if (input.includes('\\')) throw validationFailed('url', 'must not contain a backslash (the parser reads it as /)');
  if (!/^https:\/\/[^/\\@:?#]/i.test(input)) throw validationFailed('url', 'must be an absolute https URL: https://host/path');
  // The parser drops the default port, so any port left is another one.
  if (url.port !== '') throw validationFailed('url', `must use port 443, not ${url.port}`);
  if (url.username || url.password) throw validationFailed('url', 'must not carry a user name or password');
  if (url.hash) throw validationFailed('url', 'must not carry a fragment (#…)');
  const hostname = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (!hostname) throw validationFailed('url', 'must name a host');
  if (isIP(hostname)) return { hostname, ipLiteral: hostname };
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) throw validationFailed('url', `${hostname} is not a public address`);
  return { hostname, ipLiteral: null };
}

/**
 * ASCII characters RFC 3986 allows nowhere in a URL, which a url therefore carries
 * percent-encoded (space and backslash have their own refusals). The WHATWG parser would encode
 * some of them itself (`"` as `%22`), but the url is stored and answered as written, so it is
 * refused rather than changed: what a partner reads back is what they sent.
 */
const UNENCODED = new Set('"<>^`{|}');

/** The first control character (C0 or DEL) or character of UNENCODED in `input`. */
function firstUnencoded(input: string): string | undefined {
  for (const ch of input) {
    const code = ch.charCodeAt(0);
    if (code < 0x20 || code === 0x7f || UNENCODED.has(ch)) return ch;
  }
  return undefined;
}

/**
 * The rules for a url about to be stored (a new webhook): parseWebhookUrl's, and no character
 * that must be percent-encoded. Deliveries read stored urls with parseWebhookUrl alone.
 */
export function parseNewWebhookUrl(input: string): WebhookTarget {
  const target = parseWebhookUrl(input);
  const found = firstUnencoded(input);
  if (found === undefined) return target;
  const code = found.charCodeAt(0);
  if (code < 0x20 || code === 0x7f) throw validationFailed('url', 'must not contain control characters');
  throw validationFailed('url', `must not contain ${found} (write it percent-encoded: %${code.toString(16).toUpperCase()})`);
}
