import { inCidrs, parseAddress, parseCidrs, resolveClientIp } from './client-ip';

describe('resolveClientIp', () => {
  const trusted = parseCidrs(['10.0.0.0/8', '127.0.0.1/32']);

  it('ignores X-Forwarded-For when no proxy is trusted', () => {
    expect(resolveClientIp('203.0.113.9', '198.51.100.1', [])).toBe('203.0.113.9');
  });

  it('unwraps IPv4-mapped IPv6 remote addresses', () => {
    expect(resolveClientIp('::ffff:203.0.113.9', undefined, [])).toBe('203.0.113.9');
  });

  it('walks trusted hops from the right and stops at the first untrusted one', () => {
    expect(resolveClientIp('127.0.0.1', '198.51.100.7, 203.0.113.5, 10.1.2.3', trusted)).toBe('203.0.113.5');
  });

  it('does not believe X-Forwarded-For sent by an untrusted peer', () => {
    expect(resolveClientIp('198.51.100.20', '10.0.0.1', trusted)).toBe('198.51.100.20');
  });

  it('skips a malformed hop rather than trusting it', () => {
    expect(resolveClientIp('127.0.0.1', 'not-an-ip', trusted)).toBe('127.0.0.1');
  });
});

describe('inCidrs', () => {
  it('matches IPv4 and IPv6 networks and the IPv4-mapped form of a v4 network', () => {
    const cidrs = parseCidrs(['192.0.2.0/24', '2001:db8::/32', '::ffff:198.51.100.0/120']);
    expect(inCidrs(parseAddress('192.0.2.77')!, cidrs)).toBe(true);
    expect(inCidrs(parseAddress('::ffff:192.0.2.77')!, cidrs)).toBe(true);
    expect(inCidrs(parseAddress('2001:db8:1::5')!, cidrs)).toBe(true);
    expect(inCidrs(parseAddress('198.51.100.9')!, cidrs)).toBe(true);
    expect(inCidrs(parseAddress('192.0.3.1')!, cidrs)).toBe(false);
    expect(inCidrs(parseAddress('2001:db9::1')!, cidrs)).toBe(false);
  });
});
