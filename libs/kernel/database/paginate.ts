import { EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { CursorPosition, cursorNotIssued, cursorOtherQuery, DEFAULT_PAGE_SIZE, Page, PageRequest, SyncWindow } from '@kernel/core';
import { CursorCodec } from './cursor-codec';

/**
 * The horizon of a walk by `updated_since` (the SyncHorizon migration's `sync_horizon()`): a time
 * before which every change that will ever commit has committed, so a page read after it holds
 * every item whose updated_at is before it. Asked once, by the walk's first page.
 */
export async function syncHorizon(run: { query: (sql: string) => Promise<Array<{ h: Date }>> }): Promise<Date> {
  const [row] = await run.query('SELECT sync_horizon() AS h');
  return row.h;
}

/**
 * The window of this page: none without `updated_since`; the cursor's when it continues a walk (it
 * must have been issued for the same updated_since); a new one, up to a fresh horizon, on a first page.
 */
async function windowOf(page: PageRequest, c: CursorPosition | undefined, horizon: () => Promise<Date>): Promise<SyncWindow | undefined> {
  const since = page.updatedSince;
  if (!since) {
    if (c?.window) throw cursorOtherQuery();
    return undefined;
  }
  if (c) {
    if (!c.window || c.window.since.getTime() !== since.getTime()) throw cursorOtherQuery();
    return c.window;
  }
  return { since, before: await horizon() };
}

export interface PaginateOptions<T> {
  /** Timestamp column that orders the list (default created_at). */
  orderColumn?: string;
  /** SQL type of the id column (default bigint; conversations' char(32) ids use bpchar, which keeps the index usable). */
  idType?: 'bigint' | 'bpchar';
  /** The cursor position of a row (default: its createdAt and id). */
  position?: (row: T) => CursorPosition;
  /**
   * SQL of the time a row last changed, for `updated_since` (default `<alias>.updated_at`); it may
   * read the walk's horizon as `:syncBefore`.
   */
  changedAt?: string;
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
  const c = page.cursor !== undefined ? await cursors.decode(page.cursor) : undefined;
  if (c) {
    if (idType === 'bigint' && !/^\d+$/.test(c.id)) throw cursorNotIssued();
    qb.andWhere(`(${column}, ${alias}.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS ${idType}))`, {
      cursorAt: c.createdAt.toISOString(),
      cursorId: c.id,
    });
  }
  // The horizon is read before the page, in a statement of its own: the page's snapshot must be
  // taken after it (see sync_horizon()).
  const window = await windowOf(page, c, () => syncHorizon(qb.connection));
  if (window) {
    const changed = options.changedAt ?? `${alias}.updated_at`;
    qb.andWhere(`${changed} >= CAST(:syncSince AS timestamptz) AND ${changed} < CAST(:syncBefore AS timestamptz)`, {
      syncSince: window.since.toISOString(),
      syncBefore: window.before.toISOString(),
    });
  }
  const rows = await qb
    .orderBy(column, 'DESC')
    .addOrderBy(`${alias}.id`, 'DESC')
    .limit(limit + 1)
    .getMany();
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  const nextCursor = rows.length > limit && last ? await cursors.encode({ ...position(last), ...(window ? { window } : {}) }) : null;
  return window ? { items, nextCursor, horizon: window.before } : { items, nextCursor };
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
  // These lists take no updated_since: a cursor of a walk by updated_since is another query's.
  if (page.updatedSince) throw new Error('paginateRows: this list has no updated_since');
  if (page.cursor !== undefined) {
    const c = await cursors.decode(page.cursor);
    if (!q.isId(c.id)) throw cursorNotIssued();
    if (c.window) throw cursorOtherQuery();
    params.push(c.createdAt.toISOString(), c.id);
    after = ` AND (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::${q.idType})`;
  }
  params.push(limit + 1);
  const rows: Array<Record<string, unknown>> = await manager.query(`${q.sql}${after} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`, params);
  const items = rows.slice(0, limit).map(q.toItem);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? await cursors.encode(q.position(last)) : null };
}
