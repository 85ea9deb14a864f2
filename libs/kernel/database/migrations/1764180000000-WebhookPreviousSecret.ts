import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook's rotated-out signing secret, kept (like the current one, in the form the service
 * signs with) until `previous_secret_expires_at`: until then every attempt carries a signature
 * with each secret. One previous secret at most; both columns are null when there is none.
 * Nullable columns without a default, so adding them neither rewrites nor scans the table.
 */
export class WebhookPreviousSecret1764180000000 implements MigrationInterface {
  name = 'WebhookPreviousSecret1764180000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks ADD COLUMN previous_secret text, ADD COLUMN previous_secret_expires_at timestamptz(3)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhooks DROP COLUMN previous_secret, DROP COLUMN previous_secret_expires_at`);
  }
}
