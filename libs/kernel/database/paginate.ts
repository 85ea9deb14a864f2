import { EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { CursorPosition, cursorNotIssued, DEFAULT_PAGE_SIZE, Page, PageRequest } from '@kernel/core';
import { CursorCodec } from './cursor-codec';

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
  // An empty cursor is not one this API issued: refused like any other (the first page omits it).
  if (page.cursor !== undefined) {
    const c = await cursors.decode(page.cursor);
    if (idType === 'bigint' && !/^\d+$/.test(c.id)) throw cursorNotIssued();
    qb.andWhere(`(${column}, ${alias}.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS ${idType}))`, {
      cursorAt: c.createdAt.toISOString(),
      cursorId: c.id,
    });
  }
  const rows = await qb
    .orderBy(column, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(limit + 1)
    .getMany();
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? await cursors.encode(position(last)) : null };
}

export interface RowsQuery<T> {
  /** `SELECT … FROM … WHERE …` with no ORDER BY or LIMIT; `params` fill its $1…$n. The table has created_at and id. */
  sql: string;
  params: unknown[];
  /** SQL type of the id column. */
  idType: 'bigint' | 'char(32)';
  /** Whether a cursor's id is one this list could have issued. */
  isId: (id: string) => boolean;
  toItem: (row: Record<string, unknown>) => T;
  position: (item: T) => CursorPosition;
}

/** paginate's keyset rule for a raw SQL list: the same order, the same cursor check, limit + 1 rows to know whether more follow. */
export async function paginateRows<T>(manager: EntityManager, page: PageRequest, cursors: CursorCodec, q: RowsQuery<T>): Promise<Page<T>> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const params = [...q.params];
  let after = '';
  // An empty cursor is not one this API issued: refused like any other (the first page omits it).
  if (page.cursor !== undefined) {
    const c = await cursors.decode(page.cursor);
    if (!q.isId(c.id)) throw cursorNotIssued();
    params.push(c.createdAt.toISOString(), c.id);
    after = ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::${q.idType})`;
  }
  params.push(limit + 1);
  const rows: Array<Record<string, unknown>> = await manager.query(`${q.sql}${after} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params);
  const items = rows.slice(0, limit).map(q.toItem);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? await cursors.encode(q.position(last)) : null };
}
