import { MAX_ATTEMPTS, retryDelayMs } from './retry-timetable';

const MIN = 60_000;

describe('retry timetable', () => {
  it('follows the contract: 1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h after failures 1 to 7', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n))).toEqual([1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 360 * MIN, 720 * MIN, 1440 * MIN]);
  });

  it('makes eight attempts in all: nothing after the eighth failure', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(retryDelayMs(8)).toBeNull();
    expect(retryDelayMs(9)).toBeNull();
  });

  it('scales every delay alike for tests, never below 1 ms', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(n, 0.001))).toEqual([60, 300, 1800, 7200, 21600, 43200, 86400]);
    expect(retryDelayMs(1, 1e-9)).toBe(1);
    expect(retryDelayMs(8, 0.001)).toBeNull();
  });

  it('refuses nonsense', () => {
    expect(() => retryDelayMs(0)).toThrow(RangeError);
    expect(() => retryDelayMs(1.5)).toThrow(RangeError);
    expect(() => retryDelayMs(1, 0)).toThrow(RangeError);
    expect(() => retryDelayMs(1, 2)).toThrow(RangeError);
  });
});
