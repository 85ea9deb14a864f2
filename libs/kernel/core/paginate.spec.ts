import type { EntityManager } from 'typeorm';
import { CursorCodec } from './cursor-codec';
import { paginateRows, RowsQuery } from './paginate';

// A codec with a fixed secret, as if read from server_secrets.
const cursors = new CursorCodec({ query: async () => [{ secret: Buffer.alloc(32, 7) }] } as never);

const rowsOf = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(100 - i), created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, 100 - i)) }));

function manager(rows: Array<Record<string, unknown>>) {
  const calls: Array<{ sql: string; params: unknown[] }> = [];
  const m = { query: async (sql: string, params: unknown[]) => (calls.push({ sql, params }), rows.slice(0, params[params.length - 1] as number)) };
  return { m: m as unknown as EntityManager, calls };
}

const query: RowsQuery<{ id: string; createdAt: Date }> = {
  sql: 'SELECT id, created_at FROM things WHERE owner = $1',
  params: ['7'],
  idType: 'bigint',
  isId: (id) => /^[1-9][0-9]*$/.test(id),
  toItem: (r) => ({ id: r.id as string, createdAt: r.created_at as Date }),
  position: (t) => ({ createdAt: t.createdAt, id: t.id }),
};

describe('paginateRows', () => {
  it('asks for one row more than the page, newest first, and issues a cursor only when more follow', async () => {
    const { m, calls } = manager(rowsOf(3));
    const first = await paginateRows(m, { limit: 2 }, cursors, query);
    expect(calls[0]).toEqual({ sql: 'SELECT id, created_at FROM things WHERE owner = $1 ORDER BY created_at DESC, id DESC LIMIT $2', params: ['7', 3] });
    expect(first.items.map((t) => t.id)).toEqual(['100', '99']);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect((await paginateRows(manager(rowsOf(2)).m, { limit: 2 }, cursors, query)).nextCursor).toBeNull();
  });

  it('continues after the cursor position, with the params numbered after the query’s own', async () => {
    const { nextCursor } = await paginateRows(manager(rowsOf(3)).m, { limit: 2 }, cursors, query);
    const { m, calls } = manager([]);
    await paginateRows(m, { limit: 2, cursor: nextCursor! }, cursors, query);
    expect(calls[0].sql).toBe(
      'SELECT id, created_at FROM things WHERE owner = $1 AND (created_at, id) < ($2::timestamptz, $3::bigint) ORDER BY created_at DESC, id DESC LIMIT $4',
    );
    expect(calls[0].params).toEqual(['7', '2026-01-01T00:01:39.000Z', '99', 3]);
  });

  it('refuses a cursor whose id this list could not have issued', async () => {
    const foreign = await cursors.encode({ createdAt: new Date(), id: 'abc' });
    await expect(paginateRows(manager([]).m, { cursor: foreign }, cursors, query)).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
