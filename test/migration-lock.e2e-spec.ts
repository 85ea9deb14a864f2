import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfig, ConfigModule } from '@kernel/config';
import { DatabaseModule, MIGRATIONS } from '@kernel/database';
import { ENTITIES } from '@features/entities';
import { DataSource } from 'typeorm';
import { dropDatabase, recreateDatabase, withDatabase } from './support/test-db';

/**
 * `MIGRATIONS_RUN_ON_START` goes through the admin CLI's locked migrate function: TypeORM's own
 * runner takes no lock, so two replicas starting together on a fresh database would race (both
 * trying to create the same tables).
 */
describe('Start-up migrations take the migration lock', () => {
  const server = process.env.TEST_DATABASE_SERVER_URL!;
  const name = `${process.env.TEST_DATABASE_NAME}_migrate_${Date.now() % 100000}`;

  beforeAll(() => recreateDatabase(server, name));
  afterAll(() => dropDatabase(server, name));

  it('two processes starting together on a fresh database both start; each migration is applied once', async () => {
    const config = AppConfig.fromEnv({ DATABASE_URL: withDatabase(server, name), MIGRATIONS_RUN_ON_START: 'true' });
    const boot = () =>
      Test.createTestingModule({ imports: [ConfigModule.forRoot(config), DatabaseModule.forRoot('api', { entities: ENTITIES, runMigrations: true })] })
        .compile()
        .then((m) => m.init());
    // TypeOrmModule retries a failed start (3 tries), which would hide the race: no error may be logged at all.
    const errors = jest.spyOn(Logger.prototype, 'error');
    const apps = await Promise.all([boot(), boot()]);
    try {
      expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([]);
      const ds = apps[0].get(DataSource);
      const applied: Array<{ name: string }> = await ds.query(`SELECT name FROM typeorm_migrations ORDER BY id`);
      expect(applied.map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
      expect(await apps[1].get(DataSource).query(`SELECT count(*)::int AS n FROM idempotency_keys`)).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  }, 60_000);
});
