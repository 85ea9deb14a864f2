import { canonicalJson, requestFingerprint } from './fingerprint';

describe('requestFingerprint', () => {
  it('ignores key order but not values, method or path', () => {
    const a = requestFingerprint('POST', '/v1/cases', { a: 1, b: { c: [1, 2], d: 'x' } });
    expect(requestFingerprint('post', '/v1/cases', { b: { d: 'x', c: [1, 2] }, a: 1 })).toBe(a);
    expect(requestFingerprint('POST', '/v1/cases', { a: 2, b: { c: [1, 2], d: 'x' } })).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/cases', { a: 1, b: { c: [2, 1], d: 'x' } })).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/groups', { a: 1, b: { c: [1, 2], d: 'x' } })).not.toBe(a);
  });

  it('treats a missing body and an empty one alike only when both are absent', () => {
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({})).toBe('{}');
  });
});
