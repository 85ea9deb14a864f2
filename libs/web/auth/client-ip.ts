import * as ipaddr from 'ipaddr.js';
import { Cidr, inCidrs, isCidr, parseCidr } from '@kernel/config';

export { inCidrs };
export type ParsedCidr = Cidr;

/** Parses an address, unwrapping IPv4-mapped IPv6 (`::ffff:1.2.3.4`) to IPv4. */
export function parseAddress(raw: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!raw) return null;
  try {
    return ipaddr.process(raw.trim());
  } catch {
    return null;
  }
}

export function parseCidrs(cidrs: string[]): ParsedCidr[] {
  // normalised on write; an unparsable entry can only match nothing
  return cidrs.filter((c) => isCidr(c, { bareAddress: false })).map((c) => parseCidr(c));
}

/**
 * The caller's address. `X-Forwarded-For` is believed only hop by hop from the right while the
 * hop that added it is a trusted proxy; with no trusted proxies it is never read.
 */
export function resolveClientIp(remote: string | undefined, forwardedFor: string | string[] | undefined, trusted: ParsedCidr[]): string {
  // The common case costs no parse: no proxy is trusted, so the socket's address is the caller's.
  if (trusted.length === 0 && remote) {
    return remote.startsWith('::ffff:') && remote.includes('.') ? remote.slice(7) : remote;
  }
  let current = parseAddress(remote);
  if (!current) return remote ?? 'unknown';
  if (trusted.length === 0 || !forwardedFor) return current.toString();
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  while (inCidrs(current, trusted) && hops.length > 0) {
    const next = parseAddress(hops.pop());
    if (!next) break;
    current = next;
  }
  return current.toString();
}
