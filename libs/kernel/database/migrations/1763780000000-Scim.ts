import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SCIM attributes of people and groups.
 *
 * scim_users: one row per address in an organisation — a member, or an invited address until it
 * joins. Its id is the SCIM User id, so the id a provisioning client stored stays the same when
 * the invitation turns into the member. Triggers make the row whenever a person joins an
 * organisation or an invitation is made, whatever door it came through (REST, SCIM, the
 * console), so every member and invitation has a SCIM id. Rows are not deleted when a person
 * leaves through another door: a row no member or invitation backs is simply not listed
 * (see ScimUsersRepository); SCIM's DELETE deletes the row.
 */
export class Scim1763780000000 implements MigrationInterface {
  name = 'Scim1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE scim_users (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        email_key text NOT NULL CHECK (email_key = lower(email_key)),
        external_id text,
        given_name text,
        family_name text,
        formatted_name text,
        employee_number text,
        department text,
        manager_id bigint REFERENCES scim_users (id) ON DELETE SET NULL,
        -- The emails attribute as last set through SCIM; null: the sign-in address is the work email.
        emails jsonb,
        -- Lowercased search keys of the emails: '*addr' and 'type|addr'.
        email_keys text[] NOT NULL DEFAULT '{}',
        -- Deactivated through SCIM before accepting: the invitation is withdrawn, the user still listed.
        deactivated boolean NOT NULL DEFAULT false,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now()
      );
      CREATE UNIQUE INDEX scim_users_email_idx ON scim_users (organisation_id, email_key);
      CREATE INDEX scim_users_list_idx ON scim_users (organisation_id, id);
      CREATE UNIQUE INDEX scim_users_external_id_idx ON scim_users (organisation_id, external_id) WHERE external_id IS NOT NULL;
      CREATE INDEX scim_users_email_keys_idx ON scim_users USING gin (email_keys);
      CREATE INDEX scim_users_manager_idx ON scim_users (manager_id) WHERE manager_id IS NOT NULL;
      CREATE INDEX scim_users_deactivated_idx ON scim_users (organisation_id) WHERE deactivated;

      CREATE TABLE scim_groups (
        group_id bigint PRIMARY KEY REFERENCES groups (id) ON DELETE CASCADE,
        organisation_id bigint NOT NULL REFERENCES organisations (id) ON DELETE CASCADE,
        external_id text NOT NULL
      );
      CREATE UNIQUE INDEX scim_groups_external_id_idx ON scim_groups (organisation_id, external_id);

      -- The latest invitation of an address (what backs a SCIM user until they join), and the
      -- invitations that put an address into a group (a group's members).
      CREATE INDEX invitations_email_idx ON invitations (organisation_id, lower(email), id DESC);
      CREATE INDEX invitations_group_idx ON invitations (group_id) WHERE group_id IS NOT NULL;

      CREATE FUNCTION scim_users_track() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO scim_users (organisation_id, email_key, email_keys)
        VALUES (NEW.organisation_id, lower(NEW.email), ARRAY['*' || lower(NEW.email), 'work|' || lower(NEW.email)])
        ON CONFLICT (organisation_id, email_key) DO UPDATE SET deactivated = false, updated_at = now()
          WHERE scim_users.deactivated;
        RETURN NULL;
      END $$;
      CREATE TRIGGER people_scim_users_insert AFTER INSERT ON people
        FOR EACH ROW WHEN (NEW.organisation_id IS NOT NULL) EXECUTE FUNCTION scim_users_track();
      CREATE TRIGGER people_scim_users_join AFTER UPDATE OF organisation_id ON people
        FOR EACH ROW WHEN (NEW.organisation_id IS NOT NULL AND NEW.organisation_id IS DISTINCT FROM OLD.organisation_id)
        EXECUTE FUNCTION scim_users_track();
      CREATE TRIGGER invitations_scim_users AFTER INSERT ON invitations
        FOR EACH ROW WHEN (NEW.status = 'pending') EXECUTE FUNCTION scim_users_track();

      INSERT INTO scim_users (organisation_id, email_key, email_keys)
      SELECT organisation_id, lower(email), ARRAY['*' || lower(email), 'work|' || lower(email)]
        FROM (SELECT organisation_id, email FROM people WHERE organisation_id IS NOT NULL
              UNION SELECT organisation_id, email FROM invitations WHERE status = 'pending') existing
      ON CONFLICT DO NOTHING;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP TRIGGER invitations_scim_users ON invitations;
      DROP TRIGGER people_scim_users_join ON people;
      DROP TRIGGER people_scim_users_insert ON people;
      DROP FUNCTION scim_users_track();
      DROP INDEX invitations_group_idx;
      DROP INDEX invitations_email_idx;
      DROP TABLE scim_groups;
      DROP TABLE scim_users;
    `);
  }
}
