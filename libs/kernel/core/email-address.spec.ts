import { DomainError } from '@kernel/core';
import { EMAIL_PATTERN, parseDomain, parseEmail } from './email-address';

describe('parseEmail', () => {
  it('trims, keeps the local part and lowercases the domain', () => {
    expect(parseEmail('  Ana.Lopez+work@Example.ORG ')).toEqual({ address: 'Ana.Lopez+work@example.org', domain: 'example.org' });
  });

  it('accepts punycode top-level domains and hyphenated labels', () => {
    expect(parseEmail('a@mail-1.xn--p1ai').domain).toBe('mail-1.xn--p1ai');
  });

  it.each([
    ['no at sign', 'ana.example.org'],
    ['empty local part', '@example.org'],
    ['no dot in the domain', 'ana@localhost'],
    ['numeric top level', 'ana@10.0.0.1'],
    ['a space', 'ana lopez@example.org'],
    ['two dots in a row', 'ana..lopez@example.org'],
    ['a leading hyphen in a label', 'ana@-example.org'],
    ['a quoted local part', '"ana"@example.org'],
    ['a local part over 64', `${'a'.repeat(65)}@example.org`],
    ['an address over 254', `a@${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.org`],
    ['a display name', 'Ana <ana@example.org>'],
  ])('refuses %s with validation_failed naming the field', (_, input) => {
    expect(() => parseEmail(input)).toThrow(DomainError);
    expect(() => parseEmail(input)).toThrow(/^email: /);
  });
});

describe('parseDomain', () => {
  it('lowercases and drops a leading @ and a trailing dot', () => {
    expect(parseDomain('@Example.ORG.')).toBe('example.org');
  });

  it.each(['localhost', 'exa mple.org', '', 'example.123'])('refuses %j', (input) => {
    expect(() => parseDomain(input)).toThrow(/^domain: /);
  });
});

describe('EMAIL_PATTERN', () => {
  it('agrees with parseEmail on trimmed addresses of at most 64 characters before the @', () => {
    const pattern = new RegExp(EMAIL_PATTERN, 'u');
    const accepts = (a: string) => {
      try {
        parseEmail(a);
        return true;
      } catch {
        return false;
      }
    };
    for (const a of [
      'ana@example.org',
      'Ana.Lopez+work@Example.ORG',
      "o'brien@mail-1.xn--p1ai",
      'a@b.co',
      'x{y}|z~@sub.example.museum',
      'plain',
      'a@b',
      '@example.org',
      'a.@example.org',
      '.a@example.org',
      'a..b@example.org',
      'a@-b.org',
      'a@b-.org',
      'a@b.c0m',
      'a@b.c',
      '"q"@example.org',
      'a b@example.org',
      'a@[127.0.0.1]',
      'a@b.xn--',
      'a@b.xn--p1a-',
      'a@é.org',
      'a@@b.org',
    ]) {
      expect({ a, pattern: pattern.test(a) }).toEqual({ a, pattern: accepts(a) });
    }
  });
});
