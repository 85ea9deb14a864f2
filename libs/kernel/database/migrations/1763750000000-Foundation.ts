import { MigrationInterface, QueryRunner } from 'typeorm';

/** Organisations, connections, keys, the policy versions and the idempotency store. */
export class Foundation1763750000000 implements MigrationInterface {
  name = 'Foundation1763750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE integration_policy_versions (
        version int PRIMARY KEY,
        published_at timestamptz(3) NOT NULL DEFAULT now()
      );
      INSERT INTO integration_policy_versions (version) VALUES (1);

      CREATE TABLE organisations (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name text NOT NULL CHECK (length(btrim(name)) > 0),
        module_enabled boolean NOT NULL DEFAULT true,
        accepted_policy_version int REFERENCES integration_policy_versions (version),
        ip_allowlist text[] NOT NULL DEFAULT '{}',
        conversation_review boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );

      CREATE TABLE connections (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        name text NOT NULL,
        scopes text[] NOT NULL DEFAULT '{}',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        revoked_at timestamptz(3)
      );
      CREATE INDEX connections_organisation_idx ON connections (organisation_id);

      CREATE TABLE api_keys (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
        key_hash char(64) NOT NULL,
        last_four char(4) NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        last_used_at timestamptz(3),
        revoked_at timestamptz(3)
      );
      CREATE UNIQUE INDEX api_keys_hash_idx ON api_keys (key_hash);
      CREATE INDEX api_keys_connection_live_idx ON api_keys (connection_id) WHERE revoked_at IS NULL;

      -- The effect of an Idempotency-Key request and this record commit in one transaction.
      CREATE TABLE idempotency_keys (
        connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
        idempotency_key varchar(255) NOT NULL,
        method varchar(10) NOT NULL,
        path text NOT NULL,
        fingerprint char(64) NOT NULL,
        status_code int NOT NULL,
        response_body jsonb,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        PRIMARY KEY (connection_id, idempotency_key)
      );
      CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE idempotency_keys;
      DROP TABLE api_keys;
      DROP TABLE connections;
      DROP TABLE organisations;
      DROP TABLE integration_policy_versions;
    `);
  }
}
