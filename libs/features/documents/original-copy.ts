import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/** COPY's binary format: the signature, flags and header extension length (both 0). */
const FILE_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
/** The end of the rows: a field count of -1. */
const FILE_TRAILER = Buffer.from([0xff, 0xff]);
/** A row's fields before its data: count 3; lo (oid, 4 bytes); at (int8); data's length. */
const ROW_HEADER_BYTES = 2 + 4 + 4 + 4 + 8 + 4;

/** One row of document_original_chunks, all but its data: that follows as it is. */
export function chunkRowHeader(lo: number, at: number, dataBytes: number): Buffer {
  const b = Buffer.allocUnsafe(ROW_HEADER_BYTES);
  b.writeInt16BE(3, 0);
  b.writeInt32BE(4, 2);
  b.writeUInt32BE(lo, 6);
  b.writeInt32BE(8, 10);
  b.writeBigInt64BE(BigInt(at), 14);
  b.writeInt32BE(dataBytes, 22);
  return b;
}

/**
 * Copies `chunks` into the large object `lo` (created in the client's transaction), in order from
 * offset 0, through `COPY document_original_chunks FROM STDIN (FORMAT binary)` (see the
 * DocumentOriginalChunks migration): each chunk goes to the socket as it is, one CopyData message,
 * never copied into a protocol buffer. A chunk may be the same buffer refilled (SpooledFile.chunks):
 * the next one is asked for only once the socket holds none of it. Resolves with the bytes copied once
 * Postgres has taken them all; rejects with Postgres' error, or with the chunks' own (the COPY is
 * then cancelled, leaving the transaction failed: the caller rolls it back).
 */
export async function copyOriginalChunks(client: PoolClient, lo: number, chunks: AsyncIterable<Buffer>): Promise<number> {
  const copy = client.query(copyFrom(`COPY document_original_chunks (lo, at, data) FROM STDIN (FORMAT binary)`));
  // The socket pg writes to, as pg-copy-streams itself does (`connection.stream`).
  const socket = (client as unknown as { connection: { stream: Writable } }).connection.stream;
  let serverFailed = false;
  const failed = new Promise<never>((_, reject) =>
    copy.on('error', (err: Error) => {
      serverFailed = true;
      reject(err);
    }),
  );
  failed.catch(() => undefined);
  const write = (buffer: Buffer) =>
    Promise.race([new Promise<void>((resolve, reject) => copy.write(buffer, (err) => (err ? reject(err) : resolve()))), failed]);
  let at = 0;
  try {
    let first = true;
    for await (const chunk of chunks) {
      const header = chunkRowHeader(lo, at, chunk.length);
      await write(first ? Buffer.concat([FILE_HEADER, header]) : header);
      first = false;
      await write(chunk);
      // The write's callback comes once the socket has taken the chunk, or on 'drain' when it could
      // not: a chunk smaller than its high-water mark could still be queued, so make sure.
      if (socket.writableLength > 0) await Promise.race([once(socket, 'drain'), failed]);
      at += chunk.length;
    }
    await write(first ? Buffer.concat([FILE_HEADER, FILE_TRAILER]) : FILE_TRAILER);
    // 'finish' comes after Postgres' ReadyForQuery: every row is in.
    await Promise.race([new Promise<void>((resolve) => copy.end(resolve)), failed]);
    return at;
  } catch (err) {
    // Ours (the spool could not be read): CopyFail ends the COPY, so the connection is usable for
    // the rollback. After Postgres' own error the COPY is over already (and nothing is to be sent).
    if (!serverFailed) {
      copy.destroy(err as Error);
      await failed.catch(() => undefined);
    }
    throw err;
  }
}
