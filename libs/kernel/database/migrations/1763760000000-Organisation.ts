import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The platform side the API reads: permissions, verified domains, groups, people (accounts),
 * invitations, cases, conversations with turns, facts and summaries, and the events outbox.
 */
export class Organisation1763760000000 implements MigrationInterface {
  name = 'Organisation1763760000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE permissions (
        code text PRIMARY KEY,
        name text NOT NULL,
        grantable boolean NOT NULL,
        position int NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      INSERT INTO permissions (code, name, grantable, position) VALUES
        ('people.manage', 'Manage people and groups', true, 1),
        ('cases.read_all', 'Read all cases', true, 2),
        ('conversations.start', 'Start conversations', true, 3),
        ('conversations.review', 'Review conversations', true, 4),
        ('documents.send', 'Send documents', true, 5),
        ('integrations.manage', 'Manage integrations', false, 6),
        ('organisation.own', 'Own the organisation', false, 7);

      CREATE TABLE organisation_domains (
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        domain text NOT NULL CHECK (domain = lower(domain)),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (organisation_id, domain)
      );
      CREATE UNIQUE INDEX organisation_domains_domain_idx ON organisation_domains (domain);

      CREATE TABLE groups (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (length(btrim(name)) > 0),
        permissions text[] NOT NULL DEFAULT '{}',
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX groups_name_idx ON groups (organisation_id, lower(name));
      CREATE INDEX groups_list_idx ON groups (organisation_id, created_at DESC, id DESC);

      -- An account: one per address platform-wide, in at most one organisation at a time.
      CREATE TABLE people (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        email text NOT NULL,
        name text NOT NULL DEFAULT '',
        job_title text,
        organisation_id bigint REFERENCES organisations (id) ON DELETE SET NULL,
        group_id bigint REFERENCES groups (id) ON DELETE SET NULL,
        disabled boolean NOT NULL DEFAULT false,
        joined_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX people_email_idx ON people (lower(email));
      CREATE INDEX people_list_idx ON people (organisation_id, joined_at DESC, id DESC);
      CREATE INDEX people_group_idx ON people (group_id);

      CREATE TABLE invitations (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        email text NOT NULL,
        name text,
        job_title text,
        group_id bigint REFERENCES groups (id) ON DELETE SET NULL,
        token_hash char(64) NOT NULL UNIQUE,
        source text NOT NULL CHECK (source IN ('api', 'scim', 'console')),
        connection_id bigint REFERENCES connections (id) ON DELETE SET NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'withdrawn')),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        expires_at timestamptz(3) NOT NULL,
        answered_at timestamptz(3)
      );
      CREATE UNIQUE INDEX invitations_pending_email_idx ON invitations (organisation_id, lower(email)) WHERE status = 'pending';
      CREATE INDEX invitations_list_idx ON invitations (organisation_id, created_at DESC, id DESC) WHERE status = 'pending';

      CREATE TABLE cases (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        external_ref text NOT NULL,
        title text,
        group_id bigint REFERENCES groups (id) ON DELETE RESTRICT,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
        closed_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX cases_ref_idx ON cases (organisation_id, external_ref);
      CREATE INDEX cases_list_idx ON cases (organisation_id, created_at DESC, id DESC);
      CREATE INDEX cases_group_idx ON cases (group_id) WHERE group_id IS NOT NULL;

      CREATE TABLE conversations (
        id char(32) PRIMARY KEY CHECK (id ~ '^[0-9a-f]{32}$'),
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        case_id bigint NOT NULL REFERENCES cases (id) ON DELETE CASCADE,
        language_a text NOT NULL,
        language_b text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
        started_at timestamptz(3) NOT NULL DEFAULT now(),
        ended_at timestamptz(3),
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE INDEX conversations_list_idx ON conversations (organisation_id, created_at DESC, id DESC);
      CREATE INDEX conversations_case_idx ON conversations (case_id);

      CREATE TABLE turns (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id char(32) NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq int NOT NULL,
        speaker text NOT NULL,
        language text NOT NULL,
        text text NOT NULL,
        translation_language text NOT NULL,
        translation text NOT NULL,
        spoken_at timestamptz(3) NOT NULL DEFAULT now(),
        UNIQUE (conversation_id, seq)
      );

      CREATE TABLE facts (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id char(32) NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        label text NOT NULL,
        value text NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE INDEX facts_conversation_idx ON facts (conversation_id, id);

      CREATE TABLE summaries (
        conversation_id char(32) PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
        text text NOT NULL,
        revision int NOT NULL DEFAULT 1,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );

      -- Events are written in the transaction of the change that causes them, then relayed.
      CREATE TABLE outbox_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        event text NOT NULL,
        occurred_at timestamptz(3) NOT NULL DEFAULT now(),
        data jsonb NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        relayed_at timestamptz(3)
      );
      CREATE INDEX outbox_events_pending_idx ON outbox_events (created_at) WHERE relayed_at IS NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TABLE outbox_events; DROP TABLE summaries; DROP TABLE facts; DROP TABLE turns;
      DROP TABLE conversations; DROP TABLE cases; DROP TABLE invitations; DROP TABLE people;
      DROP TABLE groups; DROP TABLE organisation_domains; DROP TABLE permissions;
    `);
  }
}
