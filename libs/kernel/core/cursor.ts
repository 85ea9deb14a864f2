import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError } from './domain-error';

/**
 * The changes a walk of a list by `updated_since` covers: updated_at in [since, before). `before`
 * is the horizon the first page fixed; every later page of the walk keeps both, so no page shows
 * an item whose change the next walk would not also see.
 */
export interface SyncWindow {
  since: Date;
  before: Date;
}

/** A position in a newest-first list: the last item's (timestamp, id); ids are digits or 32 hex. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
  /** Present when the list was asked with `updated_since`: the cursor is valid only for that walk. */
  window?: SyncWindow;
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
  const fields = [p.createdAt.toISOString(), p.id];
  if (p.window) fields.push(p.window.since.toISOString(), p.window.before.toISOString());
  const payload = Buffer.from(JSON.stringify(fields));
  return Buffer.concat([mac(payload, key), payload]).toString('base64url');
}

/** The answer to a cursor this API did not issue (or issued for another list). */
export const cursorNotIssued = () => new DomainError('invalid_request', 'cursor: is not a cursor this API issued; use next_cursor from a previous page.');

/** The answer to a cursor issued for the same list asked with another `updated_since` (or without one). */
export const cursorOtherQuery = () =>
  new DomainError(
    'invalid_request',
    'cursor: was issued for another updated_since; send the same updated_since as the page that gave it, or start again without a cursor.',
  );

/** A time the cursor carries: exactly as encodeCursor wrote it, and one Postgres takes. */
function cursorTime(at: unknown): Date | null {
  if (typeof at !== 'string') return null;
  const d = new Date(at);
  if (Number.isNaN(d.getTime()) || d.toISOString() !== at) return null;
  // Defence in depth, should the key ever leak: only dates Postgres takes reach a query.
  const year = d.getUTCFullYear();
  return year < 1 || year > 9999 ? null : d;
}

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
  if (!Array.isArray(parsed) || (parsed.length !== 2 && parsed.length !== 4)) throw bad();
  const [at, id, since, before] = parsed as unknown[];
  if (typeof id !== 'string' || !/^(\d{1,18}|[0-9a-f]{32})$/.test(id)) throw bad();
  const createdAt = cursorTime(at);
  if (!createdAt) throw bad();
  if (parsed.length === 2) return { createdAt, id };
  const window = { since: cursorTime(since), before: cursorTime(before) };
  if (!window.since || !window.before) throw bad();
  return { createdAt, id, window: { since: window.since, before: window.before } };
}
