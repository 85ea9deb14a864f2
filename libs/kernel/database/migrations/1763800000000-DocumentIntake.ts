import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accepting a document needs no Redis: the api stores the document with
 * `awaiting_queue` set and notifies; the worker queues what awaits (SKIP LOCKED, several workers)
 * and clears the flag, whenever Redis is reachable.
 */
export class DocumentIntake1763800000000 implements MigrationInterface {
  name = 'DocumentIntake1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE documents ADD COLUMN awaiting_queue boolean NOT NULL DEFAULT false;
      CREATE INDEX documents_awaiting_queue_idx ON documents (created_at, id) WHERE awaiting_queue;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX documents_awaiting_queue_idx; ALTER TABLE documents DROP COLUMN awaiting_queue`);
  }
}
