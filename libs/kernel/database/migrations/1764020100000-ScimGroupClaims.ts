import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which SCIM groups claim a user. A person is in one group, while Okta and
 * Entra may push a user in several: the group that claimed the person first keeps them, a later
 * claim waits here and takes them when the earlier one lets go (see ScimMembership). `id` orders
 * the claims (first come, first served).
 */
export class ScimGroupClaims1764020100000 implements MigrationInterface {
  name = 'ScimGroupClaims1764020100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE scim_group_claims (
        id bigint GENERATED ALWAYS AS IDENTITY,
        user_id bigint NOT NULL REFERENCES scim_users (id) ON DELETE CASCADE,
        group_id bigint NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        PRIMARY KEY (user_id, group_id)
      );
      CREATE INDEX scim_group_claims_group_idx ON scim_group_claims (group_id);
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE scim_group_claims`);
  }
}
