import { CURSOR_SECRET_NAME, CursorCodec } from './cursor-codec';
import { DomainError } from '@kernel/core';

/** A stand-in for the DataSource: answers server_secrets rows in turn and records the queries. */
function dataSource(...answers: Array<Array<{ secret: Buffer }> | Error>) {
  const calls: Array<{ sql: string; params: unknown[] }> = [];
  const ds = {
    query: async (sql: string, params: unknown[]) => {
      calls.push({ sql, params });
      const next = answers.length > 1 ? answers.shift()! : answers[0];
      if (next instanceof Error) throw next;
      return next;
    },
  };
  return { ds: ds as never, calls };
}

const P = { createdAt: new Date('2026-05-06T07:08:09.010Z'), id: '42' };

describe('CursorCodec', () => {
  it('round-trips a position with the secret of the "cursor" row, read once per process', async () => {
    const { ds, calls } = dataSource([{ secret: Buffer.alloc(32, 1) }]);
    const codec = new CursorCodec(ds);
    const c = await codec.encode(P);
    expect(await codec.decode(c)).toEqual(P);
    await codec.encode(P);
    expect(calls).toEqual([{ sql: 'SELECT secret FROM server_secrets WHERE name = $1', params: [CURSOR_SECRET_NAME] }]);
    expect(CURSOR_SECRET_NAME).toBe('cursor');
  });

  it('reads the secret once even when the first calls arrive together', async () => {
    const { ds, calls } = dataSource([{ secret: Buffer.alloc(32, 1) }]);
    const codec = new CursorCodec(ds);
    await Promise.all([codec.encode(P), codec.encode(P), codec.encode(P)]);
    expect(calls).toHaveLength(1);
  });

  it('issues the same cursor on every replica sharing the secret, and refuses another installation’s', async () => {
    const a = new CursorCodec(dataSource([{ secret: Buffer.alloc(32, 1) }]).ds);
    const b = new CursorCodec(dataSource([{ secret: Buffer.alloc(32, 1) }]).ds);
    const other = new CursorCodec(dataSource([{ secret: Buffer.alloc(32, 2) }]).ds);
    const c = await a.encode(P);
    expect(await b.encode(P)).toBe(c);
    expect(await b.decode(c)).toEqual(P);
    await expect(other.decode(c)).rejects.toBeInstanceOf(DomainError);
    await expect(other.decode(c)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('says to run the migrations when the secret row is missing', async () => {
    const codec = new CursorCodec(dataSource([]).ds);
    await expect(codec.encode(P)).rejects.toThrow('server_secrets has no "cursor" row: run the migrations.');
  });

  it('tries the database again on the next call after a failed read, then keeps the secret', async () => {
    const { ds, calls } = dataSource(new Error('connection refused'), [{ secret: Buffer.alloc(32, 1) }]);
    const codec = new CursorCodec(ds);
    await expect(codec.encode(P)).rejects.toThrow('connection refused');
    const c = await codec.encode(P);
    expect(await codec.decode(c)).toEqual(P);
    expect(calls).toHaveLength(2);
  });
});
