import { readBearer } from './bearer-token';

describe('readBearer', () => {
  it('reads the token of a Bearer header (scheme case-insensitive)', () => {
    expect(readBearer('Bearer abc')).toEqual({ kind: 'token', token: 'abc' });
    expect(readBearer('bearer abc')).toEqual({ kind: 'token', token: 'abc' });
  });

  it('tells a missing header from a malformed one', () => {
    expect(readBearer(undefined)).toEqual({ kind: 'missing' });
    expect(readBearer('')).toEqual({ kind: 'missing' });
    expect(readBearer('Basic dXNlcjpwYXNz')).toEqual({ kind: 'malformed' });
    expect(readBearer('Bearer')).toEqual({ kind: 'malformed' });
    expect(readBearer('Bearer a b')).toEqual({ kind: 'malformed' });
  });
});
