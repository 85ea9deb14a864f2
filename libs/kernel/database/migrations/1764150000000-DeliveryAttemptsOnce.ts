import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An attempt is logged once however often its record is sent (a record sent again after a commit
 * whose answer was lost): a unique index on what makes it that attempt — the delivery, the series, its
 * number and when it was made — and `ON CONFLICT DO NOTHING` in the record statement. It replaced a
 * `NOT EXISTS` over the whole attempts table, which Postgres was free to plan as a sequential scan
 * joined by hash, a cost that grows with the log. The
 * index also serves everything the one it replaces on (delivery_id, id) served: a delivery's
 * attempts (a handful, sorted by id when read) and the cascade when a delivery is swept.
 * Exact duplicates of one attempt, should a log hold any, are kept once.
 */
export class DeliveryAttemptsOnce1764150000000 implements MigrationInterface {
  name = 'DeliveryAttemptsOnce1764150000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM webhook_delivery_attempts a USING webhook_delivery_attempts b
        WHERE a.delivery_id = b.delivery_id AND a.series = b.series AND a.number = b.number AND a.attempted_at = b.attempted_at AND a.id > b.id`,
    );
    await q.query(`CREATE UNIQUE INDEX webhook_delivery_attempts_once_idx ON webhook_delivery_attempts (delivery_id, series, number, attempted_at)`);
    await q.query(`DROP INDEX webhook_delivery_attempts_delivery_idx`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id, id)`);
    await q.query(`DROP INDEX webhook_delivery_attempts_once_idx`);
  }
}
