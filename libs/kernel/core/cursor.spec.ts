import { createHmac, randomBytes } from 'node:crypto';
import { DomainError } from './domain-error';
import { decodeCursor, encodeCursor } from './cursor';

const KEY = randomBytes(64);
const OTHER_KEY = randomBytes(64);

const refused = (cursor: string, key = KEY) => {
  let thrown: unknown;
  try {
    decodeCursor(cursor, key);
  } catch (e) {
    thrown = e;
  }
  expect(thrown).toBeInstanceOf(DomainError);
  expect((thrown as DomainError).code).toBe('invalid_request');
  expect((thrown as DomainError).message).toBe('cursor: is not a cursor this API issued; use next_cursor from a previous page.');
};

describe('cursor', () => {
  it('round-trips a position exactly (millisecond precision)', () => {
    const p = { createdAt: new Date('2026-11-21T10:11:12.345Z'), id: '9007199254740993' };
    expect(decodeCursor(encodeCursor(p, KEY), KEY)).toEqual(p);
    const hex = { createdAt: new Date('2026-11-21T10:11:12.345Z'), id: 'a'.repeat(32) };
    expect(decodeCursor(encodeCursor(hex, KEY), KEY)).toEqual(hex);
  });

  it('is opaque and fits the 200 characters a cursor may have, for the longest ids', () => {
    const c = encodeCursor({ createdAt: new Date('9999-12-31T23:59:59.999Z'), id: 'f'.repeat(32) }, KEY);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(c.length).toBeLessThanOrEqual(200);
  });

  it('round-trips the updated_since window of a walk, and still fits 200 characters with the longest id', () => {
    const at = new Date('9999-12-31T23:59:59.999Z');
    const p = { createdAt: at, id: 'f'.repeat(32), window: { since: new Date('0001-01-01T00:00:00.000Z'), before: at } };
    const c = encodeCursor(p, KEY);
    expect(c.length).toBeLessThanOrEqual(200);
    expect(decodeCursor(c, KEY)).toEqual(p);
    // A cursor of a walk without updated_since carries no window.
    expect(decodeCursor(encodeCursor({ createdAt: at, id: '1' }, KEY), KEY)).not.toHaveProperty('window');
  });

  it.each([
    ['garbage', '!!!'],
    ['not base64 JSON', 'abc'],
    ['wrong shape', Buffer.from('{"a":1}').toString('base64url')],
    ['non-digit id', Buffer.from('["2026-01-01T00:00:00.000Z","x1"]').toString('base64url')],
    ['bad date', Buffer.from('["yesterday","1"]').toString('base64url')],
    // What the api issued before cursors were signed, and what a caller can make up: refused unread.
    ['an unsigned, well-formed position', Buffer.from('["2026-01-01T00:00:00.000Z","1"]').toString('base64url')],
    ['a forged year 0000', Buffer.from('["0000-01-01T00:00:00.000Z","1"]').toString('base64url')],
    ['a forged negative year', Buffer.from('["-000001-01-01T00:00:00.000Z","1"]').toString('base64url')],
    ['a forged year 10000', Buffer.from('["+010000-01-01T00:00:00.000Z","1"]').toString('base64url')],
    ['an empty cursor', ''],
  ])('refuses %s with invalid_request', (_, cursor) => refused(cursor));

  it('refuses a cursor signed with another key (another installation, or a guessed key)', () => {
    const c = encodeCursor({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '5' }, OTHER_KEY);
    refused(c);
  });

  it('refuses a tampered cursor: any byte changed, cut short or lengthened', () => {
    const c = encodeCursor({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '5' }, KEY);
    const raw = Buffer.from(c, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const changed = Buffer.from(raw);
      changed[i] ^= 0x01;
      refused(changed.toString('base64url'));
    }
    refused(raw.subarray(0, raw.length - 1).toString('base64url'));
    refused(Buffer.concat([raw, Buffer.from('x')]).toString('base64url'));
    // The id of the position swapped for another, keeping the signature.
    const text = raw.toString('latin1').replace('"5"', '"6"');
    refused(Buffer.from(text, 'latin1').toString('base64url'));
  });

  it.each([
    ['a payload that is not JSON', 'not json'],
    ['an object instead of the pair', '{"at":"2026-01-01T00:00:00.000Z","id":"1"}'],
    ['a pair with a third element', '["2026-01-01T00:00:00.000Z","1","x"]'],
    ['a window that is not two times', '["2026-01-01T00:00:00.000Z","1","x","2026-01-01T00:00:00.000Z"]'],
    ['a window time without milliseconds', '["2026-01-01T00:00:00.000Z","1","2026-01-01T00:00:00Z","2026-01-01T00:00:00.000Z"]'],
    ['a window time Postgres cannot take', '["2026-01-01T00:00:00.000Z","1","2026-01-01T00:00:00.000Z","+010000-01-01T00:00:00.000Z"]'],
    ['five elements', '["2026-01-01T00:00:00.000Z","1","2026-01-01T00:00:00.000Z","2026-01-01T00:00:00.000Z","x"]'],
    ['a number as the id', '["2026-01-01T00:00:00.000Z",1]'],
    ['an id of 19 digits', '["2026-01-01T00:00:00.000Z","1234567890123456789"]'],
    ['an uppercase hex id', `["2026-01-01T00:00:00.000Z","${'A'.repeat(32)}"]`],
    ['a date without milliseconds', '["2026-01-01T00:00:00Z","1"]'],
    ['a date in another zone', '["2026-01-01T01:00:00.000+01:00","1"]'],
  ])('refuses %s even when signed with the key (checked after the signature)', (_, position) => {
    const payload = Buffer.from(position);
    const signed = Buffer.concat([createHmac('sha256', KEY).update('cursor.v1\n').update(payload).digest(), payload]).toString('base64url');
    refused(signed);
    // The same construction with a well-formed position decodes: the refusals above are the position's.
    const good = Buffer.from('["2026-01-01T00:00:00.000Z","1"]');
    expect(decodeCursor(Buffer.concat([createHmac('sha256', KEY).update('cursor.v1\n').update(good).digest(), good]).toString('base64url'), KEY).id).toBe('1');
  });

  it.each([
    ['year 0000', new Date('0000-06-01T00:00:00.000Z')],
    ['year -1', new Date(Date.UTC(-1, 0, 1))],
    ['year 10000', new Date(Date.UTC(10000, 0, 1))],
  ])('refuses a date Postgres cannot take (%s) even when signed with the key', (_, createdAt) => {
    refused(encodeCursor({ createdAt, id: '1' }, KEY));
  });
});

describe('cursor limits', () => {
  const signed = (payload: Buffer) => Buffer.concat([createHmac('sha256', KEY).update('cursor.v1\n').update(payload).digest(), payload]).toString('base64url');

  it('refuses, unread, a cursor over 200 characters even when signed with the key', () => {
    const padded = Buffer.from(`["2026-01-01T00:00:00.000Z","1"]${' '.repeat(150)}`);
    expect(JSON.parse(padded.toString())).toEqual(['2026-01-01T00:00:00.000Z', '1']);
    const cursor = signed(padded);
    expect(cursor.length).toBeGreaterThan(200);
    refused(cursor);
  });

  it('takes a signed cursor of up to 200 characters', () => {
    // 32 bytes of MAC + 118 of payload = 150 bytes = 200 base64url characters.
    const payload = Buffer.from(`["2026-01-01T00:00:00.000Z","1"]${' '.repeat(118 - 32)}`);
    const cursor = signed(payload);
    expect(cursor).toHaveLength(200);
    expect(decodeCursor(cursor, KEY)).toEqual({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '1' });
  });

  it('refuses a signature with no position after it, and a cursor shorter than a signature', () => {
    const mac = createHmac('sha256', KEY).update('cursor.v1\n').digest();
    refused(mac.toString('base64url'));
    refused(mac.subarray(0, 16).toString('base64url'));
  });

  it('refuses the characters of standard base64 and its padding', () => {
    const c = encodeCursor({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '5' }, KEY);
    refused(Buffer.from(c, 'base64url').toString('base64'));
    refused(`${c}=`);
    refused(` ${c}`);
  });

  it('signs for cursors only: an HMAC of the position alone, with the same key, is refused', () => {
    const payload = Buffer.from('["2026-01-01T00:00:00.000Z","1"]');
    refused(Buffer.concat([createHmac('sha256', KEY).update(payload).digest(), payload]).toString('base64url'));
  });

  it('decodes the earliest and latest dates Postgres takes', () => {
    for (const at of ['0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      expect(decodeCursor(encodeCursor({ createdAt: new Date(at), id: '1' }, KEY), KEY).createdAt.toISOString()).toBe(at);
    }
  });
});
