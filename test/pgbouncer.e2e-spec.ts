import 'reflect-metadata';
import { INestApplicationContext, Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfig, ConfigModule } from '@kernel/config';
import { DatabaseModule, MIGRATIONS } from '@kernel/database';
import { ENTITIES } from '@features/entities';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { makeTenant, startApi } from './support/api';
import { startPgBouncer, PgBouncer } from './support/pgbouncer';
import { dropDatabase, recreateDatabase, withDatabase } from './support/test-db';
import { until } from './support/until';
import { startWebhookWorker } from './support/webhook-worker';

/**
 * The pool may go through PgBouncer in transaction mode (DATABASE_URL), what
 * needs a session through DATABASE_DIRECT_URL. The e2e-pgbouncer jest project re-runs core specs
 * that way; this spec shows why the split is needed (each session feature really breaks through
 * the pooler, so that run means something) and that the session users take the direct road.
 *
 * The proofs are deterministic: client A uses a session feature through the pooler, which leaves it
 * on the server connection A used; client B then opens a transaction and, PgBouncer handing out the
 * server connection used last (server_round_robin = 0), gets that one; A's next statement runs on
 * another server connection, where its session state is not.
 */
describe('PgBouncer in transaction mode', () => {
  const server = process.env.TEST_DATABASE_SERVER_URL!;
  const database = process.env.TEST_DATABASE_NAME!;
  const direct = withDatabase(server, database);
  let bouncer: PgBouncer;
  const clients: Client[] = [];

  beforeAll(async () => {
    bouncer = await startPgBouncer({ serverUrl: server });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
    await bouncer?.stop();
  });

  const connect = async (url: string, applicationName = 'pgbouncer-spec') => {
    const c = new Client({ connectionString: url, application_name: applicationName });
    c.on('error', () => undefined);
    clients.push(c);
    await c.connect();
    return c;
  };
  /** A's session state left on the server connection B now holds in a transaction; `fn` runs then. */
  const withLastServerHeld = async <T>(fn: (b: Client) => Promise<T>): Promise<T> => {
    const b = await connect(bouncer.url(database));
    await b.query('BEGIN');
    try {
      return await fn(b);
    } finally {
      await b.query('COMMIT');
      await b.end();
    }
  };

  it('a LISTEN through the pooler stays on the server connection, not with the client: the client hears nothing', async () => {
    const a = await connect(bouncer.url(database));
    const heardByA: string[] = [];
    a.on('notification', (n) => heardByA.push(n.payload ?? ''));
    await a.query('LISTEN pgbouncer_spec');
    await withLastServerHeld(async (b) => {
      // B never listened, yet its session does; A's does not.
      expect((await b.query(`SELECT pg_listening_channels() AS c`)).rows).toEqual([{ c: 'pgbouncer_spec' }]);
      expect((await a.query(`SELECT pg_listening_channels() AS c`)).rows).toEqual([]);
    });
    // Postgres does send the notification (a direct listener hears it), to the server connection
    // that listened, whoever holds it then: here another client in a transaction (so that A's next
    // statement cannot be handed that very server connection, which the pool would otherwise do at
    // random). A, on another server connection, hears nothing.
    await withLastServerHeld(async (c) => {
      expect((await c.query(`SELECT pg_listening_channels() AS c`)).rows).toEqual([{ c: 'pgbouncer_spec' }]);
      const d = await connect(direct);
      await d.query('LISTEN pgbouncer_spec');
      const heardByD = new Promise<string>((resolve) => d.on('notification', (n) => resolve(n.payload ?? '')));
      await (await connect(direct)).query(`SELECT pg_notify('pgbouncer_spec', 'for A')`);
      expect(await heardByD).toBe('for A');
      await a.query('SELECT 1');
      expect(heardByA).toEqual([]);
    });
  });

  it('a named prepared statement is unknown on the next server connection (so the pool does not name them behind a pooler)', async () => {
    const a = await connect(bouncer.url(database));
    const statement = { name: 'pgbouncer-spec', text: 'SELECT 1 AS one' };
    expect((await a.query(statement)).rows).toEqual([{ one: 1 }]);
    await withLastServerHeld(async () => {
      await expect(a.query(statement)).rejects.toThrow('prepared statement "pgbouncer-spec" does not exist');
      expect((await a.query({ text: statement.text })).rows).toEqual([{ one: 1 }]); // unnamed: fine
    });
    const pooled = AppConfig.fromEnv({ DATABASE_URL: bouncer.url(database), DATABASE_DIRECT_URL: direct });
    expect(pooled.databasePreparedStatements).toBe(false);
    expect(AppConfig.fromEnv({ DATABASE_URL: direct, DATABASE_DIRECT_URL: '' }).databasePreparedStatements).toBe(true);
  });

  it('a session advisory lock through the pooler is held by the server connection, so another client "gets" it too', async () => {
    const a = await connect(bouncer.url(database));
    const key = 'pgbouncer-spec-lock';
    await a.query(`SELECT pg_advisory_lock(hashtext($1))`, [key]);
    await withLastServerHeld(async (b) => {
      // Two migrate runs locking this way would both go ahead.
      expect((await b.query(`SELECT pg_try_advisory_lock(hashtext($1)) AS got`, [key])).rows).toEqual([{ got: true }]);
      expect((await a.query(`SELECT pg_advisory_unlock(hashtext($1)) AS released`, [key])).rows).toEqual([{ released: false }]);
      await b.query(`SELECT pg_advisory_unlock_all()`);
    });
  });

  describe("the worker's LISTEN loops", () => {
    /** What PgBouncer's admin console lists as its clients' application names. */
    const pooledClients = async (): Promise<string[]> => {
      const admin = await connect(bouncer.url('pgbouncer'));
      try {
        return (await admin.query('SHOW CLIENTS')).rows.map((r: { application_name: string }) => r.application_name);
      } finally {
        await admin.end();
      }
    };
    let observer: Client | undefined;
    /** Sessions of the test database whose last statement was a LISTEN, by application name. */
    const listening = async (name: string): Promise<number> => {
      observer ??= await connect(direct);
      const rows = await observer.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND query LIKE 'LISTEN %'`,
        [database, name],
      );
      return rows.rows[0].n;
    };
    let worker: INestApplicationContext | undefined;
    afterEach(async () => {
      await worker?.close();
      worker = undefined;
    });

    it('listen on DATABASE_DIRECT_URL while the pool goes through the pooler', async () => {
      worker = await startWebhookWorker(AppConfig.fromEnv({ DATABASE_URL: bouncer.url(database), DATABASE_DIRECT_URL: direct, WORKER_HEALTH_PORT: '0' }));
      await until(async () => (await listening('worker-relay')) > 0 && (await listening('worker-document-intake')) > 0, 'the worker listening directly');
      const names = await pooledClients();
      expect(names).toContain('worker'); // the pool is on the pooler
      expect(names).not.toContain('worker-relay');
      expect(names).not.toContain('worker-document-intake');
    });

    it('(the check above can fail: without DATABASE_DIRECT_URL they go through the pooler too)', async () => {
      worker = await startWebhookWorker(AppConfig.fromEnv({ DATABASE_URL: bouncer.url(database), WORKER_HEALTH_PORT: '0' }));
      await until(async () => (await pooledClients()).includes('worker-relay'), 'the relay listening through the pooler');
      expect(await pooledClients()).toContain('worker-document-intake');
    });
  });

  it('every server connection busy: a call waits no longer than query_wait_timeout, answers 500 server_error with Retry-After, and works once one is free', async () => {
    const small = await startPgBouncer({ serverUrl: server, poolSize: 1, queryWaitTimeout: 2 });
    const api = await startApi({ DATABASE_URL: small.url(database), DATABASE_DIRECT_URL: direct });
    const holder = new Client({ connectionString: small.url(database) });
    holder.on('error', () => undefined);
    try {
      const t = await makeTenant(api.app);
      expect((await api.http().get('/v1/cases').set(t.auth)).status).toBe(200);
      // The pool's one server connection, held in a transaction: every other statement queues behind it.
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1');
      const started = Date.now();
      const res = await api.http().get('/v1/cases').set(t.auth);
      const waited = Date.now() - started;
      expect({ status: res.status, body: res.body, retryAfter: res.headers['retry-after'] }).toEqual({
        status: 500,
        body: { error: { code: 'server_error', message: 'A service this call needs is unreachable for the moment. Try again in a few seconds.' } },
        retryAfter: '5',
      });
      expect(waited).toBeLessThan(10_000);
      await holder.query('COMMIT');
      expect((await api.http().get('/v1/cases').set(t.auth)).status).toBe(200);
    } finally {
      await holder.end().catch(() => undefined);
      await api.close();
      await small.stop();
    }
  }, 60_000);

  it('two api replicas migrating on start through the pooler migrate once, on the direct connection', async () => {
    const name = `${database}_pgb_${Date.now() % 100000}`;
    await recreateDatabase(server, name);
    try {
      const config = AppConfig.fromEnv({
        DATABASE_URL: bouncer.url(name),
        DATABASE_DIRECT_URL: withDatabase(server, name),
        MIGRATIONS_RUN_ON_START: 'true',
      });
      const boot = () =>
        Test.createTestingModule({ imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot('api', { entities: ENTITIES, runMigrations: true })] })
          .compile()
          .then((m) => m.init());
      const errors = jest.spyOn(Logger.prototype, 'error');
      const runs = jest.spyOn(DataSource.prototype, 'runMigrations');
      const apps = await Promise.all([boot(), boot()]);
      try {
        expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([]);
        expect(runs.mock.contexts.map((ds) => (ds as DataSource).options)).toEqual([
          expect.objectContaining({ url: withDatabase(server, name), applicationName: 'api-migrate' }),
          expect.objectContaining({ url: withDatabase(server, name), applicationName: 'api-migrate' }),
        ]);
        const applied: Array<{ name: string }> = await apps[0].get(DataSource).query(`SELECT name FROM typeorm_migrations ORDER BY id`);
        expect(applied.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
      } finally {
        errors.mockRestore();
        runs.mockRestore();
        await Promise.all(apps.map((a) => a.close()));
      }
    } finally {
      await dropDatabase(server, name);
    }
  }, 60_000);
});
