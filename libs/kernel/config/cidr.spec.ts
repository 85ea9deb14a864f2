import * as ipaddr from 'ipaddr.js';
import { inCidrs, isCidr, normaliseCidr, parseCidr } from './cidr';

describe('the one CIDR parser', () => {
  it('reads IPv4 and IPv6 networks, and a bare address as one host', () => {
    expect(parseCidr('10.0.0.0/8').map(String)).toEqual(['10.0.0.0', '8']);
    expect(parseCidr('2001:db8::/32').map(String)).toEqual(['2001:db8::', '32']);
    expect(parseCidr('192.0.2.7').map(String)).toEqual(['192.0.2.7', '32']);
    expect(parseCidr('2001:db8::1').map(String)).toEqual(['2001:db8::1', '128']);
  });

  it('reads an IPv4-mapped network as the IPv4 network it stands for', () => {
    expect(parseCidr('::ffff:198.51.100.0/120').map(String)).toEqual(['198.51.100.0', '24']);
  });

  it('refuses what is not a CIDR, and a bare address where a prefix is required', () => {
    expect(() => parseCidr('nope')).toThrow();
    expect(() => parseCidr('10.0.0.0/33')).toThrow();
    expect(isCidr('10.0.0.1')).toBe(true);
    expect(isCidr('10.0.0.1', { bareAddress: false })).toBe(false);
    expect(isCidr('10.0.0.0/8', { bareAddress: false })).toBe(true);
  });

  it('normalises to the network address and prefix', () => {
    expect(normaliseCidr('10.1.2.3/8')).toBe('10.0.0.0/8');
    expect(normaliseCidr('::ffff:10.1.2.3/104')).toBe('10.0.0.0/8');
    expect(normaliseCidr('2001:DB8::5/32')).toBe('2001:db8::/32');
    expect(normaliseCidr('192.0.2.7')).toBe('192.0.2.7/32');
  });

  it('matches an address only against networks of its own family', () => {
    const cidrs = ['10.0.0.0/8', '2001:db8::/32'].map((c) => parseCidr(c));
    expect(inCidrs(ipaddr.parse('10.9.9.9'), cidrs)).toBe(true);
    expect(inCidrs(ipaddr.parse('2001:db8::9'), cidrs)).toBe(true);
    expect(inCidrs(ipaddr.parse('11.0.0.1'), cidrs)).toBe(false);
  });
});
