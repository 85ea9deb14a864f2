import type { RateLimitPolicy } from '@kernel/config';
import { formatRateLimit, formatRateLimitPolicy, refillSeconds, retryAfterSeconds, secondsUntilFull } from './rate-limit-headers';

const rest: RateLimitPolicy = { name: 'rest', perSecond: 100, burst: 200 };
const scim: RateLimitPolicy = { name: 'scim', perSecond: 3, burst: 10 };

// The field forms of draft-ietf-httpapi-ratelimit-headers-10: a Structured Field List whose member
// is a quoted policy name with integer parameters (RFC 9651 sf-string and sf-integer).
const MEMBER = /^"[a-z]+"(;[a-z]+=\d+)+$/;

describe('RateLimit-Policy', () => {
  it('names the policy, its burst as the quota and the seconds an empty bucket takes to fill as the window', () => {
    expect(formatRateLimitPolicy(rest)).toBe('"rest";q=200;w=2');
    expect(formatRateLimitPolicy(rest)).toMatch(MEMBER);
  });

  it('rounds a window that is not whole seconds up, and never answers a window of 0', () => {
    expect(formatRateLimitPolicy(scim)).toBe('"scim";q=10;w=4');
    expect(refillSeconds({ name: 'rest', perSecond: 1000, burst: 5 })).toBe(1);
  });
});

describe('RateLimit', () => {
  it('answers whole calls left and the seconds until the bucket is full again', () => {
    expect(formatRateLimit(rest, 199)).toBe('"rest";r=199;t=1');
    expect(formatRateLimit(rest, 57.4)).toBe('"rest";r=57;t=2');
    expect(formatRateLimit(rest, 57.4)).toMatch(MEMBER);
  });

  it('answers r=0 for less than one call, and t=0 only for a full bucket', () => {
    expect(formatRateLimit(rest, 0.6)).toBe('"rest";r=0;t=2');
    expect(formatRateLimit(scim, 0)).toBe('"scim";r=0;t=4');
    expect(secondsUntilFull(rest, 200)).toBe(0);
    expect(secondsUntilFull(rest, 199.999)).toBe(1);
  });
});

describe('Retry-After of a refused call', () => {
  // Rates are whole calls per second (at least 1), so one call is always back within a second.
  it('is the whole seconds until one call is back, at least 1', () => {
    expect(retryAfterSeconds(rest, 0.5)).toBe(1);
    expect(retryAfterSeconds({ name: 'rest', perSecond: 1, burst: 3 }, 0)).toBe(1);
    expect(retryAfterSeconds({ name: 'rest', perSecond: 1, burst: 3 }, 0.25)).toBe(1);
    expect(retryAfterSeconds(scim, 0)).toBe(1);
  });
});
