import { hash, randomBytes } from 'node:crypto';

/** `svc_` followed by 64 lowercase hex characters, 68 characters in all. */
export const KEY_PATTERN = /^svc_[0-9a-f]{64}$/;

export const generateKey = (): string => `svc_${randomBytes(32).toString('hex')}`;

/**
 * SHA-256 hex of the whole key; keys have 256 bits of entropy, so no salt or stretching is needed.
 * One-shot `crypto.hash` (Node 20.12+): no Hash object per call, on every authenticated request.
 */
export const hashKey = (key: string): string => hash('sha256', key, 'hex');

export const lastFour = (key: string): string => key.slice(-4);
