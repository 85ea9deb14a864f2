import { createHmac } from 'node:crypto';
import { computeSignature, signatureHeader, verifySignature } from './webhook-signature';

describe('webhook signature', () => {
  const secret = 'whsec_test_secret';
  const body = '{"id":"abc","event":"webhook.test","occurred_at":"2026-11-21T10:00:00.000Z","data":{"webhook_id":"1","connection_id":"2"}}';
  const t = 1_790_000_000;

  it('is the lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed with the whole secret', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(computeSignature(secret, t, body)).toBe(expected);
    expect(computeSignature(secret, t, Buffer.from(body))).toBe(expected);
    expect(signatureHeader(secret, t, body)).toBe(`t=${t},v1=${expected}`);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('verifies within five minutes of the receiver clock, and not beyond', () => {
    const header = signatureHeader(secret, t, body);
    expect(verifySignature(header, body, secret, { nowSeconds: t })).toBe(true);
    expect(verifySignature(header, body, secret, { nowSeconds: t + 300 })).toBe(true);
    expect(verifySignature(header, body, secret, { nowSeconds: t - 300 })).toBe(true);
    expect(verifySignature(header, body, secret, { nowSeconds: t + 301 })).toBe(false);
    expect(verifySignature(header, body, secret, { nowSeconds: t - 301 })).toBe(false);
  });

  it('refuses another body, another secret, another time and malformed headers', () => {
    const header = signatureHeader(secret, t, body);
    const at = { nowSeconds: t };
    expect(verifySignature(header, `${body} `, secret, at)).toBe(false);
    expect(verifySignature(header, body, 'whsec_other', at)).toBe(false);
    expect(verifySignature(header.replace(`t=${t}`, `t=${t + 1}`), body, secret, { nowSeconds: t + 1 })).toBe(false);
    for (const bad of [undefined, '', `t=${t}`, header.split(',')[1], 'garbage', `t=x,v1=${'0'.repeat(64)}`, `t=${t},v1=${'A'.repeat(64)}`]) {
      expect(verifySignature(bad, body, secret, at)).toBe(false);
    }
  });

  it('accepts a header listing several v1 signatures when one matches (secret rotation on the receiver side)', () => {
    const header = `t=${t},v1=${'0'.repeat(64)},v1=${computeSignature(secret, t, body)}`;
    expect(verifySignature(header, body, secret, { nowSeconds: t })).toBe(true);
  });
});
