import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from './domain-error';

/** A position in a newest-first list: the last item's (timestamp, id); ids are digits or 32 hex. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

const MAC_BYTES = 32;
/** Keeps a cursor's MAC from being valid for anything else the same key might ever sign. */
const PURPOSE = 'cursor.v1\n';
const mac = (payload: Buffer, key: Buffer): Buffer => createHmac('sha256', key).update(PURPOSE).update(payload).digest();

/**
 * An opaque cursor: base64url of HMAC-SHA256(key, position) followed by the position, so that only
 * cursors this installation issued are ever decoded (the key is the same on every replica: see
 * CursorCodec).
 */
export function encodeCursor(p: CursorPosition, key: Buffer): string {
  const payload = Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id]));
  return Buffer.concat([mac(payload, key), payload]).toString('base64url');
}

/** The answer to a cursor this API did not issue (or issued for another list). */
export const cursorNotIssued = () => new DomainError('invalid_request', 'cursor: is not a cursor this API issued; use next_cursor from a previous page.');

/** Decodes a cursor this API issued; anything else answers 400 invalid_request. */
export function decodeCursor(cursor: string, key: Buffer): CursorPosition {
  const bad = cursorNotIssued;
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw bad();
  const raw = Buffer.from(cursor, 'base64url');
  if (raw.length <= MAC_BYTES) throw bad();
  const payload = raw.subarray(MAC_BYTES);
  // Verified (in constant time) before anything of the position is read.
  if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), mac(payload, key))) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !/^(\d{1,18}|[0-9a-f]{32})$/.test(id)) throw bad();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at) throw bad();
  // Defence in depth, should the key ever leak: only dates Postgres takes reach a query.
  const year = createdAt.getUTCFullYear();
  if (year < 1 || year > 9999) throw bad();
  return { createdAt, id };
}
