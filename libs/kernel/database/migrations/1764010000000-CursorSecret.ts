import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Secrets of the installation, made here by Postgres so that every replica shares them with
 * nothing to configure. `cursor` signs list cursors (HMAC-SHA256): 64 bytes from four
 * gen_random_uuid() (core since PostgreSQL 13, from the server's strong random source; 122
 * random bits each). Replacing the row invalidates the cursors issued so far (they answer 400).
 */
export class CursorSecret1764010000000 implements MigrationInterface {
  name = 'CursorSecret1764010000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE server_secrets (
        name text PRIMARY KEY,
        secret bytea NOT NULL CHECK (length(secret) >= 32),
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `);
    await q.query(`
      INSERT INTO server_secrets (name, secret)
      VALUES ('cursor', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE server_secrets`);
  }
}
