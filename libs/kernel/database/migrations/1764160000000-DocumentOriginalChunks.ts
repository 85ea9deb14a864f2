import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Where a large upload's chunks are copied to: `COPY document_original_chunks FROM STDIN
 * (FORMAT binary)` sends each 64 KiB chunk to Postgres as it was read from the spool, with no copy of
 * it in the api (pg's protocol writer copied each bound `lo_put` parameter twice); the view holds no
 * rows, and its INSTEAD OF trigger writes each one into the large object the document's transaction
 * created (`lo_put`), which the document's row then takes whole.
 */
export class DocumentOriginalChunks1764160000000 implements MigrationInterface {
  name = 'DocumentOriginalChunks1764160000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION document_original_chunk_put() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM lo_put(NEW.lo, NEW.at, NEW.data);
        RETURN NEW;
      END
      $$`);
    await q.query(`CREATE VIEW document_original_chunks AS SELECT NULL::oid AS lo, NULL::bigint AS at, NULL::bytea AS data WHERE false`);
    await q.query(
      `CREATE TRIGGER document_original_chunks_put INSTEAD OF INSERT ON document_original_chunks
         FOR EACH ROW EXECUTE FUNCTION document_original_chunk_put()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP VIEW document_original_chunks`);
    await q.query(`DROP FUNCTION document_original_chunk_put()`);
  }
}
