import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Integrations section's sign-in: one-time links (15 minutes, single use), server-side
 * sessions (idle 30 minutes, absolute 12 hours) and one-shot reveals of a fresh key or webhook
 * secret. Only SHA-256 hashes of link and session tokens are stored; a reveal is sealed with a
 * key derived from the session token, which only the browser holds. `console` in server_secrets
 * keys the CSRF tokens (HMAC-SHA256), made by Postgres like the cursor secret.
 */
export class ConsoleAccess1764100000000 implements MigrationInterface {
  name = 'ConsoleAccess1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE console_sign_in_links (
        token_hash bytea PRIMARY KEY,
        person_id bigint NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        via text NOT NULL CHECK (via IN ('mail', 'handover')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        used_at timestamptz(3)
      )
    `);
    await q.query(`CREATE INDEX console_sign_in_links_expiry ON console_sign_in_links (expires_at)`);
    await q.query(`
      CREATE TABLE console_sessions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        token_hash bytea NOT NULL UNIQUE,
        person_id bigint NOT NULL REFERENCES people(id) ON DELETE CASCADE,
        organisation_id bigint NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        last_seen_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        ended_at timestamptz(3)
      )
    `);
    await q.query(`CREATE INDEX console_sessions_person ON console_sessions (person_id) WHERE ended_at IS NULL`);
    await q.query(`CREATE INDEX console_sessions_expiry ON console_sessions (expires_at)`);
    await q.query(`
      CREATE TABLE console_reveals (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        session_id bigint NOT NULL REFERENCES console_sessions(id) ON DELETE CASCADE,
        sealed bytea NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      )
    `);
    await q.query(`
      INSERT INTO server_secrets (name, secret)
      VALUES ('console', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'))
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DELETE FROM server_secrets WHERE name = 'console'`);
    await q.query(`DROP TABLE console_reveals`);
    await q.query(`DROP TABLE console_sessions`);
    await q.query(`DROP TABLE console_sign_in_links`);
  }
}
