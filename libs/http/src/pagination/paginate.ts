import { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { decodeCursor, encodeCursor } from './cursor';
import { DEFAULT_PAGE_SIZE, PageQueryDto } from './page-query.dto';

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Keyset pagination, newest first on (created_at, id): never OFFSET, so a deep page costs what
 * the first does (given an index on the filter columns, created_at DESC, id DESC).
 */
export async function paginate<T extends ObjectLiteral & { createdAt: Date; id: string }>(
  qb: SelectQueryBuilder<T>,
  page: PageQueryDto,
): Promise<Page<T>> {
  const alias = qb.alias;
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  if (page.cursor) {
    const c = decodeCursor(page.cursor);
    qb.andWhere(`(${alias}.created_at, ${alias}.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS bigint))`, {
      cursorAt: c.createdAt.toISOString(),
      cursorId: c.id,
    });
  }
  const rows = await qb.orderBy(`${alias}.created_at`, 'DESC').addOrderBy(`${alias}.id`, 'DESC').limit(limit + 1).getMany();
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
