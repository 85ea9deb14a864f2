import { AppConfig } from '@kernel/config';
import { TransactionHost, PreparedStatements } from '@kernel/database';
import { ScimUsersRepository } from '@features/scim';
import type { Pool } from 'pg';
import { useApi } from './support/api';

/**
 * The workers' hot statements (delivery reads and records, document claims and stores, the outbox
 * relay) go through PreparedStatements: named on a direct pool, so Postgres parses and plans each
 * once per server connection; unnamed behind a transaction-mode pooler; in the caller's
 * transaction when there is one (named on its connection, or unnamed behind a pooler), answering
 * rows whatever the statement.
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

  /** In a transaction: the temporary table exists only in its session, so reading it proves where a statement ran. */
  const inTransaction = <T>(name: string, fn: () => Promise<T>) =>
    api.app.get(TransactionHost).run(async (m) => {
      await m.query(`CREATE TEMP TABLE prepared_spec (id int, v text) ON COMMIT DROP`);
      await m.query(`INSERT INTO prepared_spec VALUES (1, 'a'), (2, 'b')`);
      const result = await fn();
      const [held] = await m.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = $1`, [name]);
      return { result, preparedInSession: held.n as number };
    });

  it("in the caller's transaction: runs there, named on its connection, and an UPDATE answers its rows (not TypeORM's [rows, count])", async () => {
    const { result, preparedInSession } = await inTransaction('prepared-spec-tx', () =>
      statements().query<{ id: number; v: string }>('prepared-spec-tx', `UPDATE prepared_spec SET v = v || '!' RETURNING id, v`, []),
    );
    expect(result.sort((a, b) => a.id - b.id)).toEqual([
      { id: 1, v: 'a!' },
      { id: 2, v: 'b!' },
    ]);
    // Prepared in the transaction's own session (asked from inside it), not on another pooled connection.
    expect(preparedInSession).toBe(1);
  });

  it("queryIn: on the transaction of the manager it is handed (a repository's), named there", async () => {
    const { result, preparedInSession } = await api.app.get(TransactionHost).run(async (m) => {
      await m.query(`CREATE TEMP TABLE prepared_spec (id int, v text) ON COMMIT DROP`);
      await m.query(`INSERT INTO prepared_spec VALUES (3, 'c')`);
      const rows = await statements().queryIn<{ v: string }>(m, 'prepared-spec-tx-in', `SELECT v FROM prepared_spec WHERE id = $1`, [3]);
      const [held] = await m.query(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE name = 'prepared-spec-tx-in'`);
      return { result: rows, preparedInSession: held.n as number };
    });
    expect(result).toEqual([{ v: 'c' }]);
    expect(preparedInSession).toBe(1);
    // Without a transaction: on the pool, as query() does.
    expect(await statements().queryIn(api.app.get(TransactionHost).manager, 'prepared-spec-pool-in', `SELECT $1::int AS n`, [7])).toEqual([{ n: 7 }]);
  });

  it('in a transaction with DATABASE_PREPARED_STATEMENTS off: runs there, unnamed', async () => {
    const config = api.app.get(AppConfig);
    Object.assign(config, { databasePreparedStatements: false });
    try {
      const { result, preparedInSession } = await inTransaction('prepared-spec-tx-off', () =>
        statements().query<{ id: number }>('prepared-spec-tx-off', `UPDATE prepared_spec SET v = 'x' WHERE id = 2 RETURNING id`, []),
      );
      expect(result).toEqual([{ id: 2 }]);
      expect(preparedInSession).toBe(0);
    } finally {
      Object.assign(config, { databasePreparedStatements: true });
    }
  });

  it('SCIM lookups: `userName eq` and `externalId eq` named (one statement per attribute, paging as parameters); other filters unnamed', async () => {
    const repo = api.app.get(ScimUsersRepository);
    const manager = api.app.get(TransactionHost).manager;
    const named = jest.spyOn(pool(), 'query');
    const unnamed = jest.spyOn(manager, 'query');
    try {
      for (const offset of [0, 100])
        await repo.find(manager, '1', { conditions: [{ attr: 'userName', value: `nobody${offset}@example.com` }] }, { offset, limit: 5 });
      await repo.find(manager, '1', { conditions: [{ attr: 'externalId', value: 'nobody' }] });
      expect(named.mock.calls.map((c) => (c[0] as unknown as { name?: string }).name).filter(Boolean)).toEqual([
        'scim-users-find-userName-page',
        'scim-users-find-userName-page',
        'scim-users-find-externalId',
      ]);
      expect(unnamed).not.toHaveBeenCalled();
      await repo.find(manager, '1', { conditions: [{ attr: 'displayName', value: 'Nobody' }] }, { offset: 0, limit: 5 });
      // Only statements with a name count: the pool also answers the plain statistics check a list may make first.
      const names = named.mock.calls.map((c) => (c[0] as unknown as { name?: string }).name).filter(Boolean);
      expect(names).toHaveLength(3);
      expect(unnamed).toHaveBeenCalledTimes(1);
    } finally {
      named.mockRestore();
      unnamed.mockRestore();
    }
  });
});
