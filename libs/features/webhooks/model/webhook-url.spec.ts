import { DomainError } from '@kernel/core';
import { parseNewWebhookUrl, parseWebhookUrl, WEBHOOK_URL_MAX_LENGTH, WEBHOOK_URL_PATTERN } from './webhook-url';

describe('WEBHOOK_URL_PATTERN', () => {
  const pattern = new RegExp(WEBHOOK_URL_PATTERN, 'u');
  const accepted = (url: string) => {
    try {
      parseNewWebhookUrl(url);
      return true;
    } catch {
      return false;
    }
  };

  // (NUL is refused by the front door's body check, before the url is read.)
  it('refuses what parseNewWebhookUrl refuses', () => {
    for (const url of [
      'http://hooks.example.com/x',
      'https://hooks.example.com:8443/x',
      'https://user:pw@hooks.example.com/x',
      'https://@hooks.example.com/x',
      'https://hooks.example.com/x#frag',
      'https://hooks.example.com/a b',
      'https:hooks.example.com',
      'https:///hooks.example.com',
      'https://hooks.example.com\\x',
      ' https://hooks.example.com/x',
      'ftp://hooks.example.com/',
      '',
      'https://hooks.example.com/a"b',
      'https://hooks.example.com/<script>',
      'https://hooks.example.com/x?q=<b>',
      'https://hooks.example.com/{id}',
      'https://hooks.example.com/a|b^c`d',
      'https://hooks.example.com/a\u0001b',
      'https://hooks.example.com/a\u007fb',
    ]) {
      expect({ url, pattern: pattern.test(url), code: accepted(url) }).toEqual({ url, pattern: false, code: false });
    }
  });

  it('accepts what parseNewWebhookUrl accepts (the public-address rule aside)', () => {
    for (const url of [
      'https://hooks.example.com/interpreting',
      'HTTPS://Hooks.Example.com',
      'https://hooks.example.com:443/x?a=1&b=%20',
      'https://93.184.216.34/x',
      'https://[2606:4700::1111]/x',
      'https://a.b-c.example./x',
      'https://hooks.example.com?x=1',
      'https://hooks.example.com/é/ü',
      "https://hooks.example.com/a%22b%3C%3E?q=it's&r=[1]",
    ]) {
      expect({ url, pattern: pattern.test(url), code: accepted(url) }).toEqual({ url, pattern: true, code: true });
    }
  });
});

describe('parseWebhookUrl', () => {
  const refusal = (input: string) => {
    try {
      parseWebhookUrl(input);
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('validation_failed');
      return (err as DomainError).message;
    }
    throw new Error(`${input} was accepted`);
  };

  it.each([
    ['', 'url: must not be blank'],
    ['   ', 'url: must not be blank'],
    ['not a url', 'url: must be an absolute https URL'],
    ['http://example.org/hook', 'url: must use https'],
    ['https://example.org/a b', 'url: must not contain spaces'],
    ['https://example.org\\hook', 'url: must not contain a backslash (the parser reads it as /)'],
    ['https:example.org/hook', 'url: must be an absolute https URL: https://host/path'],
    ['https:///example.org/hook', 'url: must be an absolute https URL: https://host/path'],
    ['https://@example.org/hook', 'url: must be an absolute https URL: https://host/path'],
    ['https://example.org:8443/hook', 'url: must use port 443, not 8443'],
    ['https://user:pw@example.org/hook', 'url: must not carry a user name or password'],
    ['https://example.org/hook#part', 'url: must not carry a fragment (#…)'],
    ['https://localhost/hook', 'url: localhost is not a public address'],
    ['https://api.localhost./hook', 'url: api.localhost is not a public address'],
  ])('%j: %s', (input, message) => {
    expect(refusal(input)).toBe(message);
  });

  it(`refuses a url longer than ${WEBHOOK_URL_MAX_LENGTH} characters, and takes one of exactly that length`, () => {
    const base = 'https://example.org/';
    expect(refusal(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length + 1))).toBe(`url: must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
    expect(parseWebhookUrl(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length)).hostname).toBe('example.org');
  });

  it('answers the host as written (lowercase, no trailing dot) and IP literals as addresses', () => {
    expect(parseWebhookUrl('HTTPS://Hooks.Example.ORG.:443/x?y=1')).toEqual({ hostname: 'hooks.example.org', ipLiteral: null });
    expect(parseWebhookUrl('https://[2001:DB8::1]/x')).toEqual({ hostname: '2001:db8::1', ipLiteral: '2001:db8::1' });
    // Odd IPv4 spellings are judged as the address they are.
    expect(parseWebhookUrl('https://2130706433/x')).toEqual({ hostname: '127.0.0.1', ipLiteral: '127.0.0.1' });
    expect(parseWebhookUrl('https://0x7f.1/x').ipLiteral).toBe('127.0.0.1');
  });
});

describe('parseNewWebhookUrl', () => {
  const refusal = (input: string) => {
    try {
      parseNewWebhookUrl(input);
    } catch (err) {
      expect((err as DomainError).code).toBe('validation_failed');
      return (err as DomainError).message;
    }
    throw new Error(`${input} was accepted`);
  };

  it.each([
    ['https://example.org/a"b', 'url: must not contain " (write it percent-encoded: %22)'],
    ['https://example.org/<script>', 'url: must not contain < (write it percent-encoded: %3C)'],
    ['https://example.org/x?q=a>b', 'url: must not contain > (write it percent-encoded: %3E)'],
    ['https://example.org/{id}', 'url: must not contain { (write it percent-encoded: %7B)'],
    ['https://example.org/a|b', 'url: must not contain | (write it percent-encoded: %7C)'],
    ['https://example.org/a^b', 'url: must not contain ^ (write it percent-encoded: %5E)'],
    ['https://example.org/a`b', 'url: must not contain ` (write it percent-encoded: %60)'],
    ['https://example.org/a\u0007b', 'url: must not contain control characters'],
    // The rules of parseWebhookUrl come first.
    ['http://example.org/a"b', 'url: must use https'],
  ])('%j: %s', (input, message) => {
    expect(refusal(input)).toBe(message);
  });

  it('takes the same url percent-encoded, as written', () => {
    expect(parseNewWebhookUrl('https://example.org/a%22b%3Cc%3E')).toEqual({ hostname: 'example.org', ipLiteral: null });
  });

  it('is not asked of stored urls: a delivery still reads one stored before the rule', () => {
    expect(parseWebhookUrl('https://example.org/a"b').hostname).toBe('example.org');
  });
});
