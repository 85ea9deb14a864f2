import { DomainError } from './domain-error';

/** A position in a newest-first list: the last item's (timestamp, id); ids are digits or 32 hex. */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export function encodeCursor(p: CursorPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');
}

/** Decodes a cursor this API issued; anything else answers 400 invalid_request. */
export function decodeCursor(cursor: string): CursorPosition {
  const bad = () => new DomainError('invalid_request', 'cursor: is not a cursor this API issued; use next_cursor from a previous page.');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || !/^(\d{1,18}|[0-9a-f]{32})$/.test(id)) throw bad();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime()) || createdAt.toISOString() !== at) throw bad();
  return { createdAt, id };
}
