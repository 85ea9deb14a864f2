import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';

/** The session cookie: `__Host-` (Secure, Path=/, no Domain: only this origin may set or read it). */
export const SESSION_COOKIE = '__Host-ia-console';
/** Before sign-in: the random half of the sign-in forms' CSRF token (double submit, signed). */
export const PRE_SESSION_COOKIE = '__Host-ia-console-pre';
/** The hidden form field every state-changing request carries. */
export const CSRF_FIELD = '_csrf';

/** Reads one cookie from the Cookie header (no library: the header's grammar is this simple). */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Sets (or with maxAgeSeconds 0, clears) a `__Host-` cookie: Secure, HttpOnly, SameSite=Lax, Path=/. */
export function setCookie(res: Response, name: string, value: string, maxAgeSeconds: number): void {
  const cookie = `${name}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`;
  const existing = res.getHeader('Set-Cookie');
  const list = Array.isArray(existing) ? existing : existing ? [String(existing)] : [];
  res.setHeader('Set-Cookie', [...list, cookie]);
}

export const newNonce = (): string => randomBytes(16).toString('base64');
export const newPreSessionId = (): string => randomBytes(24).toString('base64url');

/**
 * CSRF tokens: HMAC-SHA256 under the installation's `console` secret of what the request is
 * bound to — the session id once signed in, the pre-session cookie before — so a token is
 * worthless outside its session and nothing per token is stored.
 */
export function csrfToken(secret: Buffer, binding: string): string {
  return createHmac('sha256', secret).update(`csrf:${binding}`).digest('base64url');
}

export function csrfValid(secret: Buffer, binding: string, given: unknown): boolean {
  if (typeof given !== 'string' || given.length === 0 || given.length > 100) return false;
  const expected = Buffer.from(csrfToken(secret, binding));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Whether a state-changing request comes from the console's own origin: the configured public
 * origin (`PUBLIC_BASE_URL`), never one built from the request's `Host` header, which the client
 * (or anything in front of the api) chooses. Its `Origin` header, when it names one, must be that
 * origin. Pages are served with `Referrer-Policy: no-referrer`, under which browsers send
 * `Origin: null` even on a same-origin form POST; then the Fetch Metadata header `Sec-Fetch-Site`
 * (set by the browser, not by pages) must say `same-origin`. A request with neither (no browser
 * that could carry the session cookie sends none) is refused.
 */
export function sameOrigin(req: Request, publicBaseUrl: string): boolean {
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') return origin === new URL(publicBaseUrl).origin;
  return req.headers['sec-fetch-site'] === 'same-origin';
}

/**
 * Sent with every console answer. CSP: only this origin's stylesheet and script, inline script
 * only with the answer's nonce, no framing, forms post only here. no-referrer: a one-time link
 * or a freshly shown key never leaves in a Referer. no-store: pages show secrets and private data.
 */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=()',
    'Content-Security-Policy':
      `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'self'; img-src 'self' data:; connect-src 'self'; ` +
      `form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  };
}
