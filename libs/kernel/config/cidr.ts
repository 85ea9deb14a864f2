import * as ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;
/** A network: its address and prefix length. */
export type Cidr = [IpAddress, number];

/**
 * The one CIDR parser (the organisation allow-list, TRUSTED_PROXIES, WEBHOOK_ALLOWED_PRIVATE_CIDRS
 * and the admin CLI all read CIDRs through it). An IPv4-mapped IPv6 network of /96 or longer is
 * read as the IPv4 network it stands for, so `::ffff:10.0.0.0/104` and `10.0.0.0/8` are one range.
 * A bare address is one host unless `bareAddress` is false. Throws on anything else.
 */
export function parseCidr(input: string, { bareAddress = true } = {}): Cidr {
  let cidr: Cidr;
  if (input.includes('/')) cidr = ipaddr.parseCIDR(input);
  else if (bareAddress) {
    const a = ipaddr.parse(input);
    cidr = [a, a.kind() === 'ipv4' ? 32 : 128];
  } else throw new Error(`not a CIDR: ${input}`);
  const [addr, bits] = cidr;
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96 ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96] : cidr;
}

export function isCidr(input: string, options?: { bareAddress?: boolean }): boolean {
  try {
    parseCidr(input, options);
    return true;
  } catch {
    return false;
  }
}

/** The canonical spelling: the network address (host bits cleared) and the prefix, `10.0.0.0/8`. */
export function normaliseCidr(input: string): string {
  const [addr, bits] = parseCidr(input);
  const network = addr.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${addr}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${addr}/${bits}`);
  return `${ipaddr.parse(network.toString()).toString()}/${bits}`;
}

export function inCidrs(addr: IpAddress, cidrs: Cidr[]): boolean {
  return cidrs.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net as never, bits));
}
