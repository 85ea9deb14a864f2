import { copyOriginalChunks, ORIGINAL_CHUNK_BYTES } from '@features/documents';
import { createHash, randomBytes } from 'node:crypto';
import type { PoolClient } from 'pg';
import { DataSource, QueryRunner } from 'typeorm';
import { useApi } from './support/api';
import { openCase } from './support/documents-harness';

/**
 * A large original goes to Postgres through `COPY document_original_chunks FROM STDIN (FORMAT binary)`
 * (each chunk sent as read, never copied into a protocol message). What must hold: the bytes
 * stored are the bytes sent, whatever the chunk boundaries; a chunk buffer refilled for the next one
 * is never sent half-overwritten; a failure on either side ends the COPY with the connection usable
 * for the rollback, and leaves no large object behind. Also run through PgBouncer (jest.config.js).
 */
describe('Documents: a large original is copied into its row', () => {
  const { api, t } = useApi({ tenant: true });
  const db = () => api.app.get(DataSource);
  const largeObjects = async (): Promise<number> => Number((await db().query(`SELECT count(*)::int AS n FROM pg_largeobject_metadata`))[0].n);

  /** Printable text (the api takes it as a .txt) of `bytes`, different all the way through. */
  const text = (bytes: number): Buffer => {
    const letters = Buffer.from('abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ\n');
    const random = randomBytes(bytes);
    for (let i = 0; i < bytes; i++) random[i] = letters[random[i] % letters.length];
    return random;
  };

  /** `content` as one buffer refilled for each chunk, as SpooledFile.chunks hands it out. */
  async function* refilled(content: Buffer, chunkBytes: number, failAfter = Infinity): AsyncIterable<Buffer> {
    const buffer = Buffer.alloc(chunkBytes);
    for (let at = 0, n = 0; at < content.length; at += chunkBytes, n++) {
      if (n === failAfter) throw new Error('the spool could not be read');
      const piece = content.subarray(at, at + chunkBytes);
      piece.copy(buffer);
      yield buffer.subarray(0, piece.length);
    }
  }

  /** `fn` in a transaction of its own on one connection, rolled back whatever happens. */
  async function inTransaction<T>(fn: (runner: QueryRunner, client: PoolClient) => Promise<T>): Promise<T> {
    const runner = db().createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      return await fn(runner, (await runner.connect()) as PoolClient);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  it('POST /v1/documents of a file of several chunks and a part: the row holds exactly the bytes sent, no large object is left', async () => {
    const caseId = await openCase(db(), t.organisationId);
    const before = await largeObjects();
    const content = text(3 * ORIGINAL_CHUNK_BYTES + 12_345);
    const res = await api
      .http()
      .post('/v1/documents')
      .set(t.auth)
      .field('case_id', caseId)
      .field('target_language', 'es')
      .field('source_language', 'en')
      .attach('file', content, { filename: 'long.txt', contentType: 'text/plain' });
    expect(res.status).toBe(202);
    expect(res.body.data.size_bytes).toBe(content.length);
    const [row] = await db().query(`SELECT original, original_bytes, original_sha256 FROM documents WHERE id = $1`, [res.body.data.id]);
    expect(Buffer.compare(row.original, content)).toBe(0);
    expect(Number(row.original_bytes)).toBe(content.length);
    expect(row.original_sha256).toBe(createHash('sha256').update(content).digest('hex'));
    expect(await largeObjects()).toBe(before);
    // Not left queued: the next spec that runs a worker would translate it (the intake takes every organisation's).
    await db().query(`DELETE FROM documents WHERE id = $1`, [res.body.data.id]);
  });

  it('chunks from one refilled buffer, of any size, arrive in order and whole', async () => {
    for (const [bytes, chunk] of [
      [1, 64 * 1024],
      [64 * 1024, 64 * 1024],
      [64 * 1024 + 1, 64 * 1024],
      [1_000_003, 64 * 1024],
      // Thousands of chunks of an odd size: boundaries fall everywhere, and the work stays bounded.
      [30_001, 7],
      [200_000, 1024 * 1024],
    ]) {
      const content = text(bytes);
      const stored = await inTransaction(async (runner, client) => {
        const [{ oid }] = await runner.query(`SELECT lo_create(0)::text AS oid`);
        expect(await copyOriginalChunks(client, Number(oid), refilled(content, chunk))).toBe(bytes);
        return (await runner.query(`SELECT lo_get($1::oid) AS b`, [oid]))[0].b as Buffer;
      });
      expect({ bytes, chunk, same: Buffer.compare(stored, content) === 0 }).toEqual({ bytes, chunk, same: true });
    }
  });

  it('no chunk at all copies nothing', async () => {
    await inTransaction(async (runner, client) => {
      const [{ oid }] = await runner.query(`SELECT lo_create(0)::text AS oid`);
      expect(await copyOriginalChunks(client, Number(oid), refilled(Buffer.alloc(0), 1024))).toBe(0);
      expect((await runner.query(`SELECT length(lo_get($1::oid)) AS n`, [oid]))[0].n).toBe(0);
    });
  });

  it('the spool failing part-way cancels the COPY: its error comes back, the connection rolls back and goes on', async () => {
    const before = await largeObjects();
    const runner = db().createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const [{ oid }] = await runner.query(`SELECT lo_create(0)::text AS oid`);
      const client = (await runner.connect()) as PoolClient;
      await expect(copyOriginalChunks(client, Number(oid), refilled(text(400_000), 64 * 1024, 3))).rejects.toThrow('the spool could not be read');
      // The transaction failed (Postgres refused the COPY on CopyFail); it rolls back, and the connection serves on.
      await expect(runner.query(`SELECT 1`)).rejects.toThrow(/current transaction is aborted/);
      await runner.rollbackTransaction();
      expect(await runner.query(`SELECT 2 AS n`)).toEqual([{ n: 2 }]);
    } finally {
      await runner.release();
    }
    expect(await largeObjects()).toBe(before);
  });

  it("Postgres refusing a row (no such large object) rejects with Postgres' error; the connection rolls back and goes on", async () => {
    const runner = db().createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const client = (await runner.connect()) as PoolClient;
      await expect(copyOriginalChunks(client, 4_000_000_000, refilled(text(500_000), 64 * 1024))).rejects.toThrow(/large object 4000000000 does not exist/);
      await runner.rollbackTransaction();
      expect(await runner.query(`SELECT 3 AS n`)).toEqual([{ n: 3 }]);
    } finally {
      await runner.release();
    }
  });
});
