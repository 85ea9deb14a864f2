import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import { CursorCodec } from './cursor-codec';
import { DEFAULT_PAGE_SIZE } from '@kernel/core';
import { paginate, paginateRows, RowsQuery } from './paginate';

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

describe('paginateRows defaults', () => {
  it('asks for DEFAULT_PAGE_SIZE + 1 rows when the call names no limit', async () => {
    const { m, calls } = manager(rowsOf(30));
    const page = await paginateRows(m, {}, cursors, query);
    expect(calls[0].params[calls[0].params.length - 1]).toBe(DEFAULT_PAGE_SIZE + 1);
    expect(page.items).toHaveLength(DEFAULT_PAGE_SIZE);
    expect(page.nextCursor).toEqual(expect.any(String));
  });

  it('casts the cursor id to the list’s id type', async () => {
    const hexQuery: RowsQuery<{ id: string; createdAt: Date }> = { ...query, idType: 'char(32)', isId: (id) => /^[0-9a-f]{32}$/.test(id) };
    const cursor = await cursors.encode({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: 'a'.repeat(32) });
    const { m, calls } = manager([]);
    await paginateRows(m, { limit: 5, cursor }, cursors, hexQuery);
    expect(calls[0].sql).toContain('AND (created_at, id) < ($2::timestamptz, $3::char(32))');
    expect(calls[0].params).toEqual(['7', '2026-01-01T00:00:00.000Z', 'a'.repeat(32), 6]);
  });

  it('refuses a tampered cursor before querying', async () => {
    const { nextCursor } = await paginateRows(manager(rowsOf(3)).m, { limit: 2 }, cursors, query);
    const raw = Buffer.from(nextCursor!, 'base64url');
    raw[raw.length - 3] ^= 0x01;
    const { m, calls } = manager([]);
    await expect(paginateRows(m, { limit: 2, cursor: raw.toString('base64url') }, cursors, query)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(calls).toHaveLength(0);
  });

  it('refuses a cursor another installation issued', async () => {
    const elsewhere = new CursorCodec({ query: async () => [{ secret: Buffer.alloc(32, 8) }] } as never);
    const foreign = await elsewhere.encode({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '5' });
    await expect(paginateRows(manager([]).m, { cursor: foreign }, cursors, query)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('answers an empty page without a cursor', async () => {
    expect(await paginateRows(manager([]).m, { limit: 2 }, cursors, query)).toEqual({ items: [], nextCursor: null });
  });
});

/** A stand-in for TypeORM's SelectQueryBuilder that records the calls paginate makes and answers the given rows. */
function builder(rows: Array<Record<string, unknown>>, horizon = new Date('2026-01-02T00:00:00.000Z')) {
  const calls: Array<[string, ...unknown[]]> = [];
  let limit = Infinity;
  const qb = {
    alias: 't',
    connection: { query: async (sql: string) => (calls.push(['query', sql]), [{ h: horizon }]) },
    andWhere: (...args: unknown[]) => (calls.push(['andWhere', ...args]), qb),
    orderBy: (...args: unknown[]) => (calls.push(['orderBy', ...args]), qb),
    addOrderBy: (...args: unknown[]) => (calls.push(['addOrderBy', ...args]), qb),
    limit: (n: number) => (calls.push(['limit', n]), (limit = n), qb),
    getMany: async () => rows.slice(0, limit),
  };
  return { qb: qb as unknown as SelectQueryBuilder<Record<string, unknown>>, calls };
}

const entities = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(50 - i), createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 50 - i)) }));

describe('paginate', () => {
  it('orders newest first on (timestamp, id), asks for one row more than the page, and issues the last item’s position', async () => {
    const { qb, calls } = builder(entities(4));
    const page = await paginate(qb, { limit: 3 }, cursors);
    expect(calls).toEqual([
      ['orderBy', 't.created_at', 'DESC'],
      ['addOrderBy', 't.id', 'DESC'],
      ['limit', 4],
    ]);
    expect(page.items.map((e) => e.id)).toEqual(['50', '49', '48']);
    expect(await cursors.decode(page.nextCursor!)).toEqual({ createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 48)), id: '48' });
  });

  it('issues no cursor on the last page, and pages of DEFAULT_PAGE_SIZE by default', async () => {
    expect((await paginate(builder(entities(3)).qb, { limit: 3 }, cursors)).nextCursor).toBeNull();
    const { qb, calls } = builder(entities(DEFAULT_PAGE_SIZE));
    const page = await paginate(qb, {}, cursors);
    expect(calls).toContainEqual(['limit', DEFAULT_PAGE_SIZE + 1]);
    expect(page.items).toHaveLength(DEFAULT_PAGE_SIZE);
    expect(page.nextCursor).toBeNull();
  });

  it('continues strictly after the cursor position, cast to the id type', async () => {
    const cursor = await cursors.encode({ createdAt: new Date('2026-01-01T00:00:48.000Z'), id: '48' });
    const { qb, calls } = builder([]);
    await paginate(qb, { limit: 3, cursor }, cursors);
    expect(calls[0]).toEqual([
      'andWhere',
      '(t.created_at, t.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS bigint))',
      { cursorAt: '2026-01-01T00:00:48.000Z', cursorId: '48' },
    ]);
  });

  it('takes another order column, the bpchar id type and a position of its own', async () => {
    const hexId = 'b'.repeat(32);
    const cursor = await cursors.encode({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: hexId });
    const rows = [
      { id: 'c'.repeat(32), updatedAt: new Date('2025-12-31T00:00:00.000Z') },
      { id: 'd'.repeat(32), updatedAt: new Date('2025-12-30T00:00:00.000Z') },
    ];
    const { qb, calls } = builder(rows);
    const page = await paginate(qb, { limit: 1, cursor }, cursors, {
      orderColumn: 'updated_at',
      idType: 'bpchar',
      position: (r) => ({ createdAt: r.updatedAt as Date, id: r.id as string }),
    });
    expect(calls[0]).toEqual([
      'andWhere',
      '(t.updated_at, t.id) < (CAST(:cursorAt AS timestamptz), CAST(:cursorId AS bpchar))',
      { cursorAt: '2026-01-01T00:00:00.000Z', cursorId: hexId },
    ]);
    expect(calls[1]).toEqual(['orderBy', 't.updated_at', 'DESC']);
    expect(await cursors.decode(page.nextCursor!)).toEqual({ createdAt: new Date('2025-12-31T00:00:00.000Z'), id: 'c'.repeat(32) });
  });

  it('refuses a hex-id cursor on a bigint list, and a tampered cursor, before querying', async () => {
    const hex = await cursors.encode({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: 'a'.repeat(32) });
    const good = Buffer.from(await cursors.encode({ createdAt: new Date('2026-01-01T00:00:00.000Z'), id: '5' }), 'base64url');
    const tampered = Buffer.from(good.toString('latin1').replace('"5"', '"4"'), 'latin1').toString('base64url');
    const { qb, calls } = builder(entities(2));
    await expect(paginate(qb, { cursor: hex }, cursors)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(paginate(qb, { cursor: tampered }, cursors)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(calls).toEqual([]);
  });
});

describe('paginate by updated_since', () => {
  const since = new Date('2026-01-01T00:00:00.000Z');
  const horizon = new Date('2026-01-02T00:00:00.000Z');
  const window = [
    'andWhere',
    't.updated_at >= CAST(:syncSince AS timestamptz) AND t.updated_at < CAST(:syncBefore AS timestamptz)',
    {
      syncSince: since.toISOString(),
      syncBefore: horizon.toISOString(),
    },
  ];

  it('asks the horizon once, before the page, and keeps [since, horizon) in the cursor; the order stays', async () => {
    const { qb, calls } = builder(entities(3), horizon);
    const page = await paginate(qb, { limit: 2, updatedSince: since }, cursors);
    expect(calls).toEqual([['query', 'SELECT sync_horizon() AS h'], window, ['orderBy', 't.created_at', 'DESC'], ['addOrderBy', 't.id', 'DESC'], ['limit', 3]]);
    expect(page.horizon).toEqual(horizon);
    expect(await cursors.decode(page.nextCursor!)).toEqual({
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 49)),
      id: '49',
      window: { since, before: horizon },
    });
  });

  it('continues a walk with the horizon of its cursor, not a new one', async () => {
    const cursor = await cursors.encode({ createdAt: new Date('2026-01-01T00:00:48.000Z'), id: '48', window: { since, before: horizon } });
    const { qb, calls } = builder(entities(1), new Date('2030-01-01T00:00:00.000Z'));
    const page = await paginate(qb, { limit: 2, cursor, updatedSince: new Date(since) }, cursors);
    expect(calls.map((c) => c[0])).not.toContain('query');
    expect(calls[1]).toEqual(window);
    expect(page.horizon).toEqual(horizon);
  });

  it('reads the change time from the given SQL', async () => {
    const { qb, calls } = builder([]);
    await paginate(qb, { updatedSince: since }, cursors, { changedAt: 'GREATEST(t.a, t.b)' });
    expect(calls[1][1]).toBe('GREATEST(t.a, t.b) >= CAST(:syncSince AS timestamptz) AND GREATEST(t.a, t.b) < CAST(:syncBefore AS timestamptz)');
  });

  it('refuses a cursor of another updated_since, of none, or of a walk when none is asked, before querying', async () => {
    const at = new Date('2026-01-01T00:00:48.000Z');
    const walked = await cursors.encode({ createdAt: at, id: '48', window: { since, before: horizon } });
    const plain = await cursors.encode({ createdAt: at, id: '48' });
    const message = expect.stringMatching(/^cursor: was issued for another updated_since/);
    for (const page of [{ cursor: walked, updatedSince: new Date('2026-01-01T00:00:00.001Z') }, { cursor: walked }, { cursor: plain, updatedSince: since }]) {
      const { qb, calls } = builder(entities(2));
      await expect(paginate(qb, page, cursors)).rejects.toMatchObject({ code: 'invalid_request', message });
      expect(calls.filter((c) => c[0] !== 'andWhere')).toEqual([]);
    }
    await expect(paginateRows(manager([]).m, { cursor: walked }, cursors, query)).rejects.toMatchObject({ code: 'invalid_request', message });
  });
});
