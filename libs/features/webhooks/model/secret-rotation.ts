import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** How long a rotated-out secret may keep signing: 0 (it stops at once) to 7 days, 24 hours unless asked. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;
export const DEFAULT_SECRET_OVERLAP_SECONDS = 24 * 3600;

/**
 * The rotated-out secret while it still signs, decided at the time of each attempt: until its
 * expiry (excluded), null after it or when there is none.
 */
export function previousSecretInForce(previous: string | null | undefined, expiresAt: Date | null | undefined, now: Date): string | null {
  if (!previous || !expiresAt) return null;
  return now.getTime() < expiresAt.getTime() ? previous : null;
}

/**
 * Whether `given` is the webhook's secret, in constant time whatever the input: both sides are
 * hashed first, so neither their content nor their lengths shape the comparison's timing.
 */
export function secretMatches(given: string, secret: string): boolean {
  if (!secret) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}
