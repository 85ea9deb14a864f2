import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, base64url: 43 characters, safe in a URL as is. */
export const INVITATION_TOKEN_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** SHA-256 (hex) of a token: what is stored, so a database leak does not leak usable links. */
export const hashInvitationToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** A fresh accept token and its stored hash; the token itself only ever travels in the email. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashInvitationToken(token) };
}
