import { AppConfig } from '@app/config';
import { TransactionHost } from '@app/core';
import { PreparedStatements } from '@app/database';
import type { Pool } from 'pg';
import { useApi } from './support/api';

/**
 * The workers' hot statements (delivery reads and records, document claims and stores, the outbox
 * relay) go through PreparedStatements: named on a direct pool, so Postgres parses and plans each
 * once per server connection; unnamed behind a transaction-mode pooler; in the caller's
 * transaction when there is one, answering rows whatever the statement.
 */
describe('PreparedStatements', () => {
  const { api } = useApi();
  const statements = () => api.app.get(PreparedStatements);
  const pool = () => (statements() as unknown as { pool: Pool }).pool;
  const backendsHolding = async (name: string): Promise<number> => {
    // Every pooled connection is asked (each its own session): how many have `name` prepared.
    const clients = await Promise.all(Array.from({ length: 3 }, () => pool().connect()));
    try {
      const answers = await Promise.all(clients.map((c) => c.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = $1`, [name])));
      return answers.reduce((sum, a) => sum + a.rows[0].n, 0);
    } finally {
      clients.forEach((c) => c.release());
    }
  };

  it('on a direct pool: a named statement, prepared on the connection that ran it and reused there', async () => {
    expect(api.app.get(AppConfig).databasePreparedStatements).toBe(true);
    const spy = jest.spyOn(pool(), 'query');
    try {
      for (let i = 0; i < 3; i++) expect(await statements().query('prepared-spec-direct', `SELECT $1::int + 1 AS n`, [i])).toEqual([{ n: i + 1 }]);
      expect(spy.mock.calls.map((c) => (c[0] as unknown as { name?: string }).name)).toEqual(Array(3).fill('prepared-spec-direct'));
    } finally {
      spy.mockRestore();
    }
    expect(await backendsHolding('prepared-spec-direct')).toBeGreaterThanOrEqual(1);
  });

  it('with DATABASE_PREPARED_STATEMENTS off (a pooler in front): unnamed, nothing left prepared', async () => {
    const config = api.app.get(AppConfig);
    const spy = jest.spyOn(pool(), 'query');
    Object.assign(config, { databasePreparedStatements: false });
    try {
      expect(await statements().query('prepared-spec-pooled', `SELECT $1::text AS s`, ['x'])).toEqual([{ s: 'x' }]);
      expect((spy.mock.calls[0][0] as unknown as { name?: string }).name).toBeUndefined();
    } finally {
      Object.assign(config, { databasePreparedStatements: true });
      spy.mockRestore();
    }
    expect(await backendsHolding('prepared-spec-pooled')).toBe(0);
  });

  it("in the caller's transaction: runs there, unnamed, and an UPDATE answers its rows (not TypeORM's [rows, count])", async () => {
    const tx = api.app.get(TransactionHost);
    const rows = await tx.run(async (m) => {
      await m.query(`CREATE TEMP TABLE prepared_spec (id int, v text) ON COMMIT DROP`);
      await m.query(`INSERT INTO prepared_spec VALUES (1, 'a'), (2, 'b')`);
      const changed = await statements().query<{ id: number; v: string }>('prepared-spec-tx', `UPDATE prepared_spec SET v = v || '!' RETURNING id, v`, []);
      // The temporary table exists only in this transaction's session: the statement ran in it.
      return changed;
    });
    expect(rows.sort((a, b) => a.id - b.id)).toEqual([
      { id: 1, v: 'a!' },
      { id: 2, v: 'b!' },
    ]);
    expect(await backendsHolding('prepared-spec-tx')).toBe(0);
  });
});
