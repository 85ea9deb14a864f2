import type { Request } from 'express';
import { csrfToken, csrfValid, pageHeaders, readCookie, sameOrigin } from './console-security';

const req = (headers: Record<string, string>): Request => ({ headers }) as unknown as Request;
const secret = Buffer.alloc(32, 7);

describe('console CSRF tokens', () => {
  it('accept the token of the same binding only', () => {
    const token = csrfToken(secret, 'session:42');
    expect(csrfValid(secret, 'session:42', token)).toBe(true);
    expect(csrfValid(secret, 'session:43', token)).toBe(false);
    expect(csrfValid(Buffer.alloc(32, 8), 'session:42', token)).toBe(false);
    expect(csrfValid(secret, 'pre:42', token)).toBe(false);
  });

  it('refuse a missing, empty, altered, over-long or non-string token', () => {
    const token = csrfToken(secret, 'session:1');
    for (const given of [undefined, '', token.slice(1), `${token}x`, `${token.slice(0, -1)}A`, 'x'.repeat(500), [token], 42]) {
      expect(csrfValid(secret, 'session:1', given)).toBe(false);
    }
  });
});

describe('console same-origin check', () => {
  const base = 'https://console.example.org';
  it('accepts the configured public origin', () => {
    expect(sameOrigin(req({ origin: base }), base)).toBe(true);
    expect(sameOrigin(req({ origin: base, host: 'console.example.org' }), `${base}/some/path/`)).toBe(true);
  });
  it('refuses an Origin that matches only the Host header the client sent', () => {
    expect(sameOrigin(req({ origin: 'https://127.0.0.1:8443', host: '127.0.0.1:8443' }), base)).toBe(false);
    expect(sameOrigin(req({ origin: 'https://evil.example', host: 'evil.example' }), base)).toBe(false);
  });
  it('refuses another origin, even with Sec-Fetch-Site claiming same-origin', () => {
    expect(sameOrigin(req({ origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' }), base)).toBe(false);
    expect(sameOrigin(req({ origin: 'http://console.example.org' }), base)).toBe(false);
  });
  it('takes Origin: null (a no-referrer page) only with Sec-Fetch-Site: same-origin', () => {
    expect(sameOrigin(req({ origin: 'null', 'sec-fetch-site': 'same-origin' }), base)).toBe(true);
    expect(sameOrigin(req({ origin: 'null', 'sec-fetch-site': 'cross-site' }), base)).toBe(false);
    expect(sameOrigin(req({ origin: 'null' }), base)).toBe(false);
    expect(sameOrigin(req({}), base)).toBe(false);
  });
});

describe('console cookies and headers', () => {
  it('reads one cookie by exact name', () => {
    const r = req({ cookie: 'a=1; __Host-ia-console=tok; __Host-ia-console-pre=pre' });
    expect(readCookie(r, '__Host-ia-console')).toBe('tok');
    expect(readCookie(r, '__Host-ia-console-pre')).toBe('pre');
    expect(readCookie(r, 'b')).toBeUndefined();
    expect(readCookie(req({}), 'a')).toBeUndefined();
  });
  it('puts the nonce in the CSP and keeps inline script out', () => {
    const h = pageHeaders('abc123');
    expect(h['Content-Security-Policy']).toContain("script-src 'self' 'nonce-abc123'");
    expect(h['Content-Security-Policy']).toContain("frame-ancestors 'none'");
    expect(h['Content-Security-Policy']).not.toContain('unsafe-inline');
    expect(h['Referrer-Policy']).toBe('no-referrer');
    expect(h['Cache-Control']).toBe('no-store');
  });
});
