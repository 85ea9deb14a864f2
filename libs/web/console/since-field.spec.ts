import { parseSince, SINCE_EXAMPLE, sinceText } from './since-field';

describe('the console’s since fields (a time typed in UTC)', () => {
  it('reads a real time', () => {
    expect(parseSince('2026-01-31T08:00')?.toISOString()).toBe('2026-01-31T08:00:00.000Z');
    expect(parseSince(' 2024-02-29T23:59:59 ')?.toISOString()).toBe('2024-02-29T23:59:59.000Z');
    expect(parseSince('0050-06-01T00:00')?.toISOString()).toBe('0050-06-01T00:00:00.000Z');
  });

  it('reads the format of its hint, and writes a value in that format', () => {
    expect(parseSince(SINCE_EXAMPLE)?.toISOString()).toBe('2026-01-31T08:00:00.000Z');
    expect(parseSince('2026-01-31 08:00:30')?.toISOString()).toBe('2026-01-31T08:00:30.000Z');
    const d = new Date('2026-11-27T17:45:12.345Z');
    expect(sinceText(d)).toBe('2026-11-27 17:45');
    expect(sinceText(d)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(SINCE_EXAMPLE).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(parseSince(sinceText(d))?.toISOString()).toBe('2026-11-27T17:45:00.000Z');
  });

  it('answers null for anything out of range instead of rolling it over', () => {
    for (const v of [
      '2026-02-30T08:00',
      '2026-13-01T00:00',
      '2026-01-15T25:00',
      '2026-01-15T10:60',
      '2026-01-15T10:00:60',
      '0000-01-01T00:00',
      '2026-00-10T00:00',
    ]) {
      expect([v, parseSince(v)]).toEqual([v, null]);
    }
    for (const v of ['', 'yesterday', '99999999999999999999', '275760-09-13T00:00', '2026-01-15', '2026-01-15  08:00', '31/01/2026, 08:00'])
      expect(parseSince(v)).toBeNull();
  });
});
