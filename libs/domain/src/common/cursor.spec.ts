import { DomainError } from './domain-error';
import { decodeCursor, encodeCursor } from './cursor';

describe('cursor', () => {
  it('round-trips a position exactly (millisecond precision)', () => {
    const p = { createdAt: new Date('2026-11-21T10:11:12.345Z'), id: '9007199254740993' };
    expect(decodeCursor(encodeCursor(p))).toEqual(p);
  });

  it.each([
    ['garbage', '!!!'],
    ['not base64 JSON', 'abc'],
    ['wrong shape', Buffer.from('{"a":1}').toString('base64url')],
    ['non-digit id', Buffer.from('["2026-01-01T00:00:00.000Z","x1"]').toString('base64url')],
    ['bad date', Buffer.from('["yesterday","1"]').toString('base64url')],
  ])('refuses %s with invalid_request', (_, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(DomainError);
    try {
      decodeCursor(cursor);
    } catch (e) {
      expect((e as DomainError).code).toBe('invalid_request');
    }
  });
});
