import { MigrationInterface, QueryRunner } from 'typeorm';

/** The tables a SCIM user or group list reads, whose statistics the planner needs current. */
const LISTED = ['people', 'invitations', 'scim_users', 'groups', 'scim_group_claims'];

/**
 * SCIM lists at scale. `groups_scim_list_idx` lets a group walk continue after a group id (see
 * ScimWalks) with an index range within the organisation, as `scim_users_list_idx` does for users.
 * The listed tables are analysed after 1% of their rows (and at least 1,000) changed instead of
 * Postgres's default 10% + 50: an organisation provisioned in bulk into a large installation gets
 * statistics for its rows at the next autovacuum round rather than after a tenth of the table has
 * changed (docs/operations/scale.md says why and what the setting costs).
 */
export class ScimPagingStatistics1764260000000 implements MigrationInterface {
  name = 'ScimPagingStatistics1764260000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX groups_scim_list_idx ON groups (organisation_id, id)`);
    for (const table of LISTED) {
      await q.query(`ALTER TABLE ${table} SET (autovacuum_analyze_scale_factor = 0.01, autovacuum_analyze_threshold = 1000)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of LISTED) await q.query(`ALTER TABLE ${table} RESET (autovacuum_analyze_scale_factor, autovacuum_analyze_threshold)`);
    await q.query(`DROP INDEX groups_scim_list_idx`);
  }
}
