import { readBearer } from './bearer-token';

describe('readBearer', () => {
  it('reads the token of a Bearer header (scheme case-insensitive)', () => {
    expect(readBearer('Bearer abc')).toEqual({ kind: 'token', token: 'abc' });
    expect(readBearer('bearer abc')).toEqual({ kind: 'token', token: 'abc' });
  });

  it('tells a missing header from a malformed one', () => {
    expect(readBearer(undefined)).toEqual({ kind: 'missing' });
    expect(readBearer('')).toEqual({ kind: 'missing' });
    expect(readBearer('Basic dXNlcjpwYXNz')).toEqual({ kind: 'malformed', scheme: { other: 'Basic' } });
    expect(readBearer('Bearer')).toEqual({ kind: 'malformed' });
    expect(readBearer('Bearer a b')).toEqual({ kind: 'malformed' });
  });

  it('tells what is wrong with the form: no scheme (the key alone), or another scheme (named only when it is a token)', () => {
    expect(readBearer(`svc_${'a'.repeat(64)}`)).toEqual({ kind: 'malformed', scheme: 'none' });
    expect(readBearer('Token abc')).toEqual({ kind: 'malformed', scheme: { other: 'Token' } });
    expect(readBearer('<b>x</b> abc')).toEqual({ kind: 'malformed', scheme: { other: null } });
    expect(readBearer('BEARER abc')).toEqual({ kind: 'token', token: 'abc' });
  });
});
