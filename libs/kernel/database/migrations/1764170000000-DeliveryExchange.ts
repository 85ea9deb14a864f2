import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each attempt keeps the whole exchange: the headers sent (the body is the delivery's, the same for
 * every attempt, and is rebuilt from its row), the answer's headers, the first 8 KiB of its body
 * (its size when known, and whether it was cut), and the class of the failure. Nullable columns
 * (and a constant default) without a constraint to check, so adding them neither rewrites nor scans
 * the table (the sender bounds the body); attempts logged before have none. They
 * go with their attempt, which goes with its delivery (ON DELETE CASCADE) in the 90-day sweep.
 */
export class DeliveryExchange1764170000000 implements MigrationInterface {
  name = 'DeliveryExchange1764170000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_delivery_attempts
         ADD COLUMN request_headers jsonb,
         ADD COLUMN response_headers jsonb,
         ADD COLUMN response_body bytea,
         ADD COLUMN response_body_size int,
         ADD COLUMN response_body_truncated boolean NOT NULL DEFAULT false,
         ADD COLUMN error_class text`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_delivery_attempts
         DROP COLUMN request_headers, DROP COLUMN response_headers, DROP COLUMN response_body,
         DROP COLUMN response_body_size, DROP COLUMN response_body_truncated, DROP COLUMN error_class`,
    );
  }
}
