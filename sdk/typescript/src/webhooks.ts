import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header of a delivery that carries its signature: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`. */
export const SIGNATURE_HEADER = 'Service-Signature';
/** How far the signed time may be from this machine's clock. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface VerifyOptions {
  /** Seconds the signed time may differ from now (default 300). */
  toleranceSeconds?: number;
  /** The time to compare with, in unix seconds (default: now). */
  nowSeconds?: number;
}

/**
 * Whether a webhook delivery is genuine: the `Service-Signature` header is well formed, its `t` is
 * within the tolerance of now, and one of its `v1` values is the HMAC-SHA256 of `<t>.<raw body>`
 * keyed with one of `secrets` (compared in constant time). Give the body exactly as received (the
 * bytes, before any JSON parsing). Several secrets cover a rotation: the delivery carries one `v1`
 * per secret in force, and either secret accepts it.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value = ''] = part.trim().split('=', 2);
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS)) return false;
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  let matched = false;
  // Every pair is compared, so the time taken does not tell which secret or value matched.
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    for (const signature of signatures) if (timingSafeEqual(signature, expected)) matched = true;
  }
  return matched;
}
