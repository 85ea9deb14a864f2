import { addressProblem, embeddedIPv4, parseCidrList } from './address-policy';
import * as ipaddr from 'ipaddr.js';

describe('webhook address rule', () => {
  it.each([['8.8.8.8'], ['1.1.1.1'], ['2606:4700:4700::1111'], ['::ffff:8.8.8.8'], ['64:ff9b::808:808'], ['2002:808:808::1']])(
    'allows the public address %s',
    (a) => {
      expect(addressProblem(a)).toBeNull();
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation'],
    ['198.51.100.10', 'documentation'],
    ['203.0.113.10', 'documentation'],
    ['198.18.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001::1', 'Teredo'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.1.1.1', 'private'],
    ['::ffff:0:a01:101', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['64:ff9b:1::a00:1', 'NAT64'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
    ['::7f00:1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::a00:1', 'private'],
    ['not-an-ip', 'not an IP address'],
  ])('refuses %s (%s)', (a, why) => {
    expect(addressProblem(a)).toContain(why);
  });

  it('unwraps IPv4 forms of IPv6', () => {
    expect(embeddedIPv4(ipaddr.parse('::ffff:1.2.3.4'))?.toString()).toBe('1.2.3.4');
    expect(embeddedIPv4(ipaddr.parse('64:ff9b::102:304'))?.toString()).toBe('1.2.3.4');
    expect(embeddedIPv4(ipaddr.parse('2002:102:304::99'))?.toString()).toBe('1.2.3.4');
    expect(embeddedIPv4(ipaddr.parse('::102:304'))?.toString()).toBe('1.2.3.4');
    expect(embeddedIPv4(ipaddr.parse('::1'))).toBeNull();
    expect(embeddedIPv4(ipaddr.parse('::'))).toBeNull();
    expect(embeddedIPv4(ipaddr.parse('2606:4700::1'))).toBeNull();
    expect(embeddedIPv4(ipaddr.parse('1.2.3.4'))).toBeNull();
  });

  it('lets the operator reach listed private ranges, in any form, but never unspecified or multicast', () => {
    const allowed = parseCidrList(['127.0.0.1/32', '10.20.0.0/16', 'fd00:1::/32']);
    expect(addressProblem('127.0.0.1', allowed)).toBeNull();
    expect(addressProblem('::ffff:127.0.0.1', allowed)).toBeNull();
    expect(addressProblem('10.20.3.4', allowed)).toBeNull();
    expect(addressProblem('fd00:1::5', allowed)).toBeNull();
    expect(addressProblem('127.0.0.2', allowed)).toContain('loopback');
    expect(addressProblem('10.21.0.1', allowed)).toContain('private');
    expect(addressProblem('0.0.0.0', parseCidrList(['0.0.0.0/0']))).toContain('unspecified');
    expect(addressProblem('224.0.0.1', parseCidrList(['0.0.0.0/0']))).toContain('multicast');
  });

  it('refuses a bad setting at start', () => {
    expect(() => parseCidrList(['10.0.0.0/8', 'nope'])).toThrow(/WEBHOOK_ALLOWED_PRIVATE_CIDRS: "nope"/);
    expect(parseCidrList(['10.0.0.1']).map(([a, b]) => `${a}/${b}`)).toEqual(['10.0.0.1/32']);
  });
});
