import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { CursorPosition, cursorNotIssued } from './cursor';
import { CursorCodec } from './cursor-codec';

/** Page size when a list call names none; the edge bounds `limit` to 1..MAX_PAGE_SIZE. */
export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;

/** What a list call asked for (validated at the edge). */
export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export interface PaginateOptions<T> {
  /** Timestamp column that orders the list (default created_at). */
  orderColumn?: string;
  /** SQL type of the id column (default bigint; conversations' char(32) ids use bpchar, which keeps the index usable). */
  idType?: 'bigint' | 'bpchar';
  /** The cursor position of a row (default: its createdAt and id). */
  position?: (row: T) => CursorPosition;
}

/**
 * Keyset pagination, newest first on (timestamp, id): never OFFSET, so a deep page costs what
 * the first does (given an index on the filter columns, timestamp DESC, id DESC).
 */
export async function paginate<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  page: PageRequest,
  cursors: CursorCodec,
  options: PaginateOptions<T> = {},
): Promise<Page<T>> {
  const alias = qb.alias;
  const column = `${alias}.${options.orderColumn ?? 'created_at'}`;
  const idType = options.idType ?? 'bigint';
  const position = options.position ?? ((row: T) => ({ createdAt: row.createdAt as Date, id: String(row.id) }));
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  if (page.cursor) {
    const c = await cursors.decode(page.cursor);
    if (idType === 'bigint' && !/^\d+$/.test(c.id)) throw cursorNotIssued();
    qb.andWhere(`(${column}, ${alias}.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS ${idType}))`, {
      cursorAt: c.createdAt.toISOString(),
      cursorId: c.id,
    });
  }
  const rows = await qb.orderBy(column, 'DESC').addOrderBy(`${alias}.id`, 'DESC').limit(limit + 1).getMany();
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? await cursors.encode(position(last)) : null };
}
