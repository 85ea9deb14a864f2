import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The warnings mailed before a failing webhook is switched off: one row per webhook and failing
 * period (its `failing_since`), so a webhook is warned once per period, a new period gets a new
 * warning, and two workers inserting the same row send it once (the primary key). A new table
 * rather than a column of `webhooks`: nothing that reads or writes webhooks changes.
 */
export class SwitchOffWarnings1764180500000 implements MigrationInterface {
  name = 'SwitchOffWarnings1764180500000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE webhook_switch_off_warnings (
         webhook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
         failing_since timestamptz(3) NOT NULL,
         sent_at timestamptz(3) NOT NULL,
         PRIMARY KEY (webhook_id, failing_since)
       )`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhook_switch_off_warnings`);
  }
}
