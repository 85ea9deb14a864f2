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

describe('requestFingerprint, what makes two requests the same', () => {
  const body = { name: 'Ana', tags: [{ b: 2, a: 1 }], address: { city: 'Utrecht', street: { no: 4, name: 'Oudegracht' } } };

  it('ignores key order at every depth, including inside objects in arrays', () => {
    const reordered = { address: { street: { name: 'Oudegracht', no: 4 }, city: 'Utrecht' }, tags: [{ a: 1, b: 2 }], name: 'Ana' };
    expect(requestFingerprint('POST', '/v1/people', reordered)).toBe(requestFingerprint('POST', '/v1/people', body));
    expect(canonicalJson(reordered)).toBe('{"address":{"city":"Utrecht","street":{"name":"Oudegracht","no":4}},"name":"Ana","tags":[{"a":1,"b":2}]}');
  });

  it('tells apart another method, another path (case included), and another extra', () => {
    const a = requestFingerprint('POST', '/v1/people', body);
    expect(requestFingerprint('PUT', '/v1/people', body)).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/People', body)).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/people/', body)).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/people', body, 'caller-2')).not.toBe(a);
    expect(requestFingerprint('POST', '/v1/people', body, '')).toBe(a);
  });

  it('drops keys whose value is undefined, as JSON does, but not null ones', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
    expect(requestFingerprint('POST', '/p', { a: 1, b: undefined })).toBe(requestFingerprint('POST', '/p', { a: 1 }));
    expect(requestFingerprint('POST', '/p', { a: 1, b: null })).not.toBe(requestFingerprint('POST', '/p', { a: 1 }));
  });

  it('tells apart values of another JSON type', () => {
    expect(requestFingerprint('POST', '/p', { a: 1 })).not.toBe(requestFingerprint('POST', '/p', { a: '1' }));
    expect(requestFingerprint('POST', '/p', { a: true })).not.toBe(requestFingerprint('POST', '/p', { a: 'true' }));
    expect(requestFingerprint('POST', '/p', [])).not.toBe(requestFingerprint('POST', '/p', {}));
  });

  it('is hex SHA-256', () => {
    expect(requestFingerprint('POST', '/p', {})).toMatch(/^[0-9a-f]{64}$/);
  });
});
