import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An Idempotency-Key is claimed by a row before its request runs, instead of
 * an advisory lock held by a transaction around the whole request: a request that waits on the
 * network (the test call's POST, the creation's DNS) then holds no pooled connection. A claimed
 * row has no answer yet (`status_code` null), a `claim_token` naming its request, and an
 * `expires_at` a lease away, so a crashed request's key is free again once the lease ends.
 */
export class IdempotencyClaims1764030000000 implements MigrationInterface {
  name = 'IdempotencyClaims1764030000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE idempotency_keys ALTER COLUMN status_code DROP NOT NULL;
      ALTER TABLE idempotency_keys ADD COLUMN claim_token uuid;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DELETE FROM idempotency_keys WHERE status_code IS NULL;
      ALTER TABLE idempotency_keys DROP COLUMN claim_token;
      ALTER TABLE idempotency_keys ALTER COLUMN status_code SET NOT NULL;
    `);
  }
}
