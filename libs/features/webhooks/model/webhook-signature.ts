import { createHmac, timingSafeEqual } from 'node:crypto';

/** The delivery header that carries `t=<unix seconds>,v1=<hex>`. */
export const SIGNATURE_HEADER = 'Service-Signature';
/** How far `t` may be from the receiver's clock (the contract's receiver-side rule). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Lowercase hex HMAC-SHA256 of `<t>.<raw body>`, keyed with the whole secret (`whsec_…`). */
export function computeSignature(secret: string, timestamp: number, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * The `Service-Signature` value for a body sent at `timestamp` (unix seconds): one `v1` per secret,
 * the current one first, then a rotated-out one still in its overlap (as Stripe does), so a receiver
 * verifying with either secret accepts it.
 */
export function signatureHeader(secret: string, timestamp: number, rawBody: string | Buffer, ...olderSecrets: string[]): string {
  return [`t=${timestamp}`, ...[secret, ...olderSecrets].map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`)].join(',');
}

/**
 * A receiver's check: the header is well formed, `t` is within the tolerance of `nowSeconds`,
 * and one `v1` matches, compared in constant time. `rawBody` is the body as received.
 */
export function verifySignature(
  header: string | undefined,
  rawBody: string | Buffer,
  secret: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value ?? '')) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/.test(value ?? '')) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const expected = Buffer.from(computeSignature(secret, timestamp, rawBody), 'hex');
  return signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
}
