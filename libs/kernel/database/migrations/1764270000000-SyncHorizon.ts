import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Incremental sync of the REST lists (cases, conversations, groups, people, invitations) by
 * `updated_since`.
 *
 * - Every one of those rows carries updated_at, written by a trigger and by nothing else, whatever
 *   the write path (REST, SCIM, the console, the admin CLI, the platform's own services): a change
 *   of a field the object shows, or of what its calls read (a conversation's turns, facts and
 *   summary; a group's members), moves it. The time is the clock at the write, inside the writing
 *   transaction, floored to the millisecond (never the transaction's start, nor the caller's clock):
 *   the horizon below depends on it.
 * - sync_horizon() is a time H before which every change that will ever commit has committed: the
 *   clock, read first, and no later than the start of any transaction running now. A walk that
 *   reads its pages after asking H, and shows only rows changed before H, has missed no change
 *   before H that commits later; docs/architecture.md gives the argument.
 * - An index per list on (organisation_id, updated_at) serves a walk over few changes; the list
 *   indexes on the order serve a walk over nearly all rows. The planner picks by the estimate.
 *   Invitations have none: a walk reads the organisation's pending ones, which the list index holds.
 */
export class SyncHorizon1764270000000 implements MigrationInterface {
  name = 'SyncHorizon1764270000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE conversations ADD COLUMN updated_at timestamptz(3) NOT NULL DEFAULT now()`);
    await q.query(`ALTER TABLE invitations ADD COLUMN updated_at timestamptz(3) NOT NULL DEFAULT now()`);
    await q.query(`
      UPDATE conversations v SET updated_at = GREATEST(v.created_at, v.started_at, v.ended_at,
        (SELECT s.updated_at FROM summaries s WHERE s.conversation_id = v.id),
        (SELECT max(f.created_at) FROM facts f WHERE f.conversation_id = v.id),
        (SELECT max(t.spoken_at) FROM turns t WHERE t.conversation_id = v.id))`);
    await q.query(`UPDATE invitations SET updated_at = GREATEST(created_at, answered_at)`);

    // The clock at the write, floored to the millisecond, and never before the row was made.
    await q.query(`
      CREATE FUNCTION sync_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.updated_at := GREATEST(NEW.created_at, date_trunc('milliseconds', clock_timestamp()));
        RETURN NEW;
      END $$`);
    await q.query(`
      CREATE FUNCTION sync_keep() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.updated_at := OLD.updated_at;
        RETURN NEW;
      END $$`);
    // Which fields move updated_at, per table. An update that changes none of them keeps it,
    // whatever it set (so a PATCH that changes nothing moves nothing); one that sets it to null
    // (a touch: a change held in another table, a group's members or a conversation's summary)
    // moves it. Triggers of one event run in name order: _keep before _stamp.
    const shown: Record<string, string[]> = {
      cases: ['external_ref', 'title', 'group_id', 'status', 'closed_at'],
      conversations: ['case_id', 'language_a', 'language_b', 'status', 'started_at', 'ended_at'],
      groups: ['name', 'permissions'],
      people: ['email', 'name', 'job_title', 'organisation_id', 'group_id', 'disabled', 'joined_at'],
      invitations: ['email', 'name', 'job_title', 'group_id', 'status', 'expires_at'],
    };
    for (const [table, columns] of Object.entries(shown)) {
      const changed = `(${columns.map((c) => `OLD.${c}`).join(', ')}) IS DISTINCT FROM (${columns.map((c) => `NEW.${c}`).join(', ')})`;
      await q.query(`CREATE TRIGGER ${table}_sync_stamp_insert BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION sync_stamp()`);
      await q.query(
        `CREATE TRIGGER ${table}_sync_keep BEFORE UPDATE ON ${table} FOR EACH ROW
         WHEN (NOT (${changed}) AND NEW.updated_at IS NOT NULL) EXECUTE FUNCTION sync_keep()`,
      );
      await q.query(
        `CREATE TRIGGER ${table}_sync_stamp_update BEFORE UPDATE ON ${table} FOR EACH ROW
         WHEN (${changed} OR NEW.updated_at IS NULL) EXECUTE FUNCTION sync_stamp()`,
      );
    }

    // A group's members are the people whose group_id names it. A touch sets updated_at to null,
    // which sync_stamp replaces (so it always moves, even when it held that time already). Once per
    // statement, over its transition tables: provisioning many people into one group writes the
    // group once, not once per person.
    await q.query(`
      CREATE FUNCTION sync_touch_groups() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          UPDATE groups SET updated_at = NULL WHERE id IN (SELECT group_id FROM new_people);
        ELSIF TG_OP = 'DELETE' THEN
          UPDATE groups SET updated_at = NULL WHERE id IN (SELECT group_id FROM old_people);
        ELSE
          UPDATE groups SET updated_at = NULL WHERE id IN (
            SELECT v.group_id FROM old_people o JOIN new_people n ON n.id = o.id,
                   LATERAL (VALUES (o.group_id), (n.group_id)) AS v (group_id)
             WHERE (o.group_id, o.organisation_id) IS DISTINCT FROM (n.group_id, n.organisation_id));
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(
      `CREATE TRIGGER people_sync_touch_groups_insert AFTER INSERT ON people REFERENCING NEW TABLE AS new_people
       FOR EACH STATEMENT EXECUTE FUNCTION sync_touch_groups()`,
    );
    await q.query(
      `CREATE TRIGGER people_sync_touch_groups_update AFTER UPDATE ON people REFERENCING OLD TABLE AS old_people NEW TABLE AS new_people
       FOR EACH STATEMENT EXECUTE FUNCTION sync_touch_groups()`,
    );
    await q.query(
      `CREATE TRIGGER people_sync_touch_groups_delete AFTER DELETE ON people REFERENCING OLD TABLE AS old_people
       FOR EACH STATEMENT EXECUTE FUNCTION sync_touch_groups()`,
    );

    // What a conversation's calls read beside its own row: its turns, facts and summary.
    await q.query(`
      CREATE FUNCTION sync_touch_conversation() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE conversations SET updated_at = NULL WHERE id = NEW.conversation_id;
        RETURN NULL;
      END $$`);
    for (const table of ['turns', 'facts', 'summaries']) {
      await q.query(
        `CREATE TRIGGER ${table}_sync_touch_conversation AFTER INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION sync_touch_conversation()`,
      );
    }

    /*
     * H = min(the clock, read first; the start of every transaction of a client in this database
     * other than the caller's). pg_stat_activity is read after the clock (plpgsql runs in order;
     * the backend-status snapshot is cleared first, so it is read now, not reused from earlier in
     * the caller's transaction). The caller must read its page in a later statement.
     */
    await q.query(`
      CREATE FUNCTION sync_horizon() RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        clock timestamptz := clock_timestamp();
        oldest timestamptz;
      BEGIN
        PERFORM pg_stat_clear_snapshot();
        SELECT min(a.xact_start) INTO oldest FROM pg_stat_activity a
         WHERE a.datname = current_database() AND a.backend_type = 'client backend' AND a.pid <> pg_backend_pid();
        RETURN date_trunc('milliseconds', LEAST(clock, oldest));
      END $$`);

    await q.query(`CREATE INDEX cases_changed_idx ON cases (organisation_id, updated_at)`);
    await q.query(`CREATE INDEX conversations_changed_idx ON conversations (organisation_id, updated_at)`);
    await q.query(`CREATE INDEX groups_changed_idx ON groups (organisation_id, updated_at)`);
    await q.query(`CREATE INDEX people_changed_idx ON people (organisation_id, updated_at) WHERE organisation_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['cases', 'conversations', 'groups', 'people']) await q.query(`DROP INDEX ${index}_changed_idx`);
    await q.query(`DROP FUNCTION sync_horizon()`);
    for (const table of ['turns', 'facts', 'summaries']) await q.query(`DROP TRIGGER ${table}_sync_touch_conversation ON ${table}`);
    await q.query(`DROP FUNCTION sync_touch_conversation()`);
    for (const t of ['people_sync_touch_groups_insert', 'people_sync_touch_groups_update', 'people_sync_touch_groups_delete'])
      await q.query(`DROP TRIGGER ${t} ON people`);
    await q.query(`DROP FUNCTION sync_touch_groups()`);
    for (const table of ['cases', 'conversations', 'groups', 'people', 'invitations']) {
      await q.query(`DROP TRIGGER ${table}_sync_stamp_insert ON ${table}`);
      await q.query(`DROP TRIGGER ${table}_sync_keep ON ${table}`);
      await q.query(`DROP TRIGGER ${table}_sync_stamp_update ON ${table}`);
    }
    await q.query(`DROP FUNCTION sync_stamp()`);
    await q.query(`DROP FUNCTION sync_keep()`);
    await q.query(`ALTER TABLE invitations DROP COLUMN updated_at`);
    await q.query(`ALTER TABLE conversations DROP COLUMN updated_at`);
  }
}
