import { isId, isUuid } from './ids';

describe('ids from requests, checked to their column type before any query', () => {
  it('isId: digits as answered, always within bigint', () => {
    expect(isId('1')).toBe(true);
    expect(isId('999999999999999999')).toBe(true);
    for (const v of ['0', '01', '-1', '1.0', '', '9999999999999999999', '99999999999999999999', 'a', ' 1', 1]) expect(isId(v)).toBe(false);
  });

  it('isUuid: the 8-4-4-4-12 hex form only', () => {
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    expect(isUuid('3f2b8c1e-9a4d-4c7e-8f00-1a2b3c4d5e6f')).toBe(true);
    for (const v of [
      '-'.repeat(36),
      'a'.repeat(36),
      '0'.repeat(36),
      '0'.repeat(32),
      '3f2b8c1e9a4d-4c7e-8f00-1a2b3c4d5e6f-',
      'g0000000-0000-0000-0000-000000000000',
      '',
      undefined,
    ]) {
      expect(isUuid(v)).toBe(false);
    }
  });
});
