import type { RateLimitPolicy } from '@kernel/config';

/**
 * The rate-limit answer headers, in the form of draft-ietf-httpapi-ratelimit-headers-10 (the
 * `RateLimit-Policy` and `RateLimit` fields as Structured Field Lists): one list member per policy,
 * named by a quoted string, with integer parameters.
 *
 *   RateLimit-Policy: "rest";q=200;w=2    at most q calls at once, a drained bucket is full again after w seconds
 *   RateLimit: "rest";r=57;t=2            r calls left now, the bucket is full again in t seconds
 *
 * A token bucket has no window that resets, so `w` and `t` are read as the time a bucket takes to
 * fill: `w` for an empty one (burst / rate, rounded up), `t` for this one. The sustained rate is
 * about q / w calls per second.
 */

/** Seconds an empty bucket takes to fill again (at least 1: the draft's `w` is a positive integer). */
export function refillSeconds(policy: RateLimitPolicy): number {
  return Math.max(1, Math.ceil(policy.burst / policy.perSecond));
}

/** `RateLimit-Policy`: the same on every answer of a policy. */
export function formatRateLimitPolicy(policy: RateLimitPolicy): string {
  return `"${policy.name}";q=${policy.burst};w=${refillSeconds(policy)}`;
}

/** Whole calls left in a bucket that holds `tokens` (a fraction of a token is not a call). */
export function remainingCalls(tokens: number): number {
  return Math.max(0, Math.floor(tokens));
}

/** Seconds until a bucket that holds `tokens` is full again (0 when it is full). */
export function secondsUntilFull(policy: RateLimitPolicy, tokens: number): number {
  return Math.max(0, Math.ceil((policy.burst - tokens) / policy.perSecond));
}

/** `RateLimit`: what is left after this call. */
export function formatRateLimit(policy: RateLimitPolicy, tokens: number): string {
  return `"${policy.name}";r=${remainingCalls(tokens)};t=${secondsUntilFull(policy, tokens)}`;
}

/** `Retry-After` of a refused call: whole seconds until the bucket holds one call again (at least 1). */
export function retryAfterSeconds(policy: RateLimitPolicy, tokens: number): number {
  return Math.max(1, Math.ceil((1 - tokens) / policy.perSecond));
}
