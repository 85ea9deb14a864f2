import { Injectable } from '@nestjs/common';
import { AppConfig, Cidr, ConfigError, inCidrs, parseCidr } from '@kernel/config';
import * as ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * What answers (refusals, test calls, the delivery log) say of a name that resolves where webhooks
 * may not go: never the address, which would tell a key holder how internal names resolve.
 */
export const NOT_PUBLIC = 'an address that is not public';

const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
/** Never reachable, whatever the operator allows: these are not one host. */
const NEVER = new Set(['unspecified', 'multicast', 'broadcast']);
const RANGE_NAMES: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT (CGNAT) address',
  uniqueLocal: 'a unique-local address',
  multicast: 'a multicast address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
  teredo: 'a Teredo address',
  rfc6052: 'a local-use NAT64 address',
  rfc6145: 'an IPv4-translated address',
  ipv4Mapped: 'an IPv4-mapped address',
  '6to4': 'a 6to4 address',
};

/**
 * The IPv4 address an IPv6 form stands for: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), well-known NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::/48) and
 * IPv4-compatible (::a.b.c.d) all stand for that IPv4 host, so they are judged as it.
 */
export function embeddedIPv4(address: Address): ipaddr.IPv4 | null {
  if (address.kind() !== 'ipv6') return null;
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  const range = v6.range();
  const p = v6.parts;
  if (range === 'rfc6145' || v6.match(NAT64_WELL_KNOWN)) return new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  if (range === '6to4') return new ipaddr.IPv4([p[1] >> 8, p[1] & 0xff, p[2] >> 8, p[2] & 0xff]);
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291; ipaddr.js calls it unicast). :: and ::1
  // are not in `unicast` and keep their own names.
  if (range === 'unicast' && p.slice(0, 6).every((x) => x === 0)) return new ipaddr.IPv4([p[6] >> 8, p[6] & 0xff, p[7] >> 8, p[7] & 0xff]);
  return null;
}

/** Parses CIDRs (or bare addresses, one host each); throws naming the first bad entry. */
export function parseCidrList(list: string[], setting = 'WEBHOOK_ALLOWED_PRIVATE_CIDRS'): Cidr[] {
  return list.map((entry) => {
    try {
      return parseCidr(entry);
    } catch {
      throw new ConfigError(`Invalid configuration:\n  ${setting}: "${entry}" is not an IPv4 or IPv6 CIDR`);
    }
  });
}

/**
 * Why `address` may not receive webhooks ("a private address", "an IPv6 form of 10.0.0.1, a
 * private address"), or null when it may. Only `unicast` (public) space is allowed, after
 * unwrapping IPv4 forms of IPv6; `allowedPrivate` lets an operator reach internal receivers
 * (WEBHOOK_ALLOWED_PRIVATE_CIDRS), but never the unspecified, multicast or broadcast address.
 */
export function addressProblem(address: string, allowedPrivate: Cidr[] = []): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const effective = embeddedIPv4(parsed) ?? parsed;
  const form = effective === parsed ? '' : `an IPv6 form of ${effective.toString()}, `;
  const range = effective.range();
  const name = (r: string) => RANGE_NAMES[r] ?? `a non-public address (${r})`;
  if (NEVER.has(parsed.range())) return name(parsed.range());
  if (NEVER.has(range)) return `${form}${name(range)}`;
  if (inCidrs(effective, allowedPrivate) || inCidrs(parsed, allowedPrivate)) return null;
  if (range === 'unicast') return null;
  return `${form}${name(range)}`;
}

/** The address rule with the operator's private CIDRs applied. */
@Injectable()
export class AddressPolicy {
  private readonly allowedPrivate: Cidr[];

  constructor(config: AppConfig) {
    this.allowedPrivate = parseCidrList(config.webhookAllowedPrivateCidrs);
  }

  /** Why the address may not be reached, or null. */
  problem(address: string): string | null {
    return addressProblem(address, this.allowedPrivate);
  }
}
