import { previousSecretInForce, secretMatches } from './secret-rotation';
import { signatureHeader, verifySignature } from './webhook-signature';

describe('secret rotation', () => {
  const expiresAt = new Date('2026-11-28T12:00:00.000Z');

  it('keeps the rotated-out secret signing until its expiry, decided at the time asked, and not from it on', () => {
    expect(previousSecretInForce('whsec_old', expiresAt, new Date(expiresAt.getTime() - 1))).toBe('whsec_old');
    expect(previousSecretInForce('whsec_old', expiresAt, expiresAt)).toBeNull();
    expect(previousSecretInForce('whsec_old', expiresAt, new Date(expiresAt.getTime() + 1))).toBeNull();
    expect(previousSecretInForce(null, expiresAt, new Date(0))).toBeNull();
    expect(previousSecretInForce('whsec_old', null, new Date(0))).toBeNull();
  });

  it('matches only the whole secret, whatever the length given, and never an empty (wiped) one', () => {
    expect(secretMatches('whsec_abc', 'whsec_abc')).toBe(true);
    expect(secretMatches('whsec_abd', 'whsec_abc')).toBe(false);
    expect(secretMatches('whsec_ab', 'whsec_abc')).toBe(false);
    expect(secretMatches('whsec_abc ', 'whsec_abc')).toBe(false);
    expect(secretMatches('', '')).toBe(false);
  });

  it('signs with both secrets in one header, the current one first, and either verifies', () => {
    const t = 1_790_000_000;
    const body = '{"id":"x"}';
    const header = signatureHeader('whsec_new', t, body, 'whsec_old');
    expect(header).toMatch(/^t=1790000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(header.startsWith(signatureHeader('whsec_new', t, body))).toBe(true);
    for (const s of ['whsec_new', 'whsec_old']) expect(verifySignature(header, body, s, { nowSeconds: t })).toBe(true);
    expect(verifySignature(header, body, 'whsec_other', { nowSeconds: t })).toBe(false);
  });
});
