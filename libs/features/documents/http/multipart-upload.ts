import { DomainError, validationFailed } from '@kernel/core';
import { DocumentFile, DocumentFileFacts, DocumentFileProbe } from '../model/document-file';
import { fileTooLarge } from '../model/documents.errors';
import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Request } from 'express';
import busboy, { type Busboy } from 'busboy';

/** The file of a multipart document request, spooled to a temporary file (at most the configured limit), not held in memory. */
export interface UploadedDocument {
  file: SpooledFile;
  name: string | null;
  declaredType: string | null;
  sha256: string;
}

/**
 * An upload's bytes in a temporary file under the OS's temporary directory (TMPDIR), removed from
 * the directory as soon as it is created: only this open handle reaches it, and the space is
 * freed when it is closed (at the end of the request, see MultipartUploadGuard), or when the
 * process ends, however it ends.
 */
export class SpooledFile implements DocumentFile {
  private facts?: DocumentFileFacts;
  private closed = false;

  private constructor(private readonly handle: FileHandle) {}

  static async create(): Promise<SpooledFile> {
    const path = join(tmpdir(), `integrations-upload-${process.pid}-${randomBytes(8).toString('hex')}`);
    const handle = await open(path, 'wx+', 0o600);
    try {
      await unlink(path);
    } catch (err) {
      await handle.close();
      throw err;
    }
    return new SpooledFile(handle);
  }

  /** Appends `chunk` at `position` (the caller writes in order, one write at a time). */
  async write(chunk: Buffer, position: number): Promise<void> {
    let done = 0;
    while (done < chunk.length) done += (await this.handle.write(chunk, done, chunk.length - done, position + done)).bytesWritten;
  }

  finish(facts: DocumentFileFacts): void {
    this.facts = facts;
  }

  private get known(): DocumentFileFacts {
    if (!this.facts) throw new Error('the upload is not complete');
    return this.facts;
  }

  get size(): number {
    return this.known.size;
  }
  get sha256(): string {
    return this.known.sha256;
  }
  get head(): Buffer {
    return this.known.head;
  }
  get containsNul(): boolean {
    return this.known.containsNul;
  }
  get validUtf8(): boolean {
    return this.known.validUtf8;
  }

  /** One buffer per pass, refilled for each chunk (see DocumentFile.chunks). */
  async *chunks(chunkBytes: number): AsyncIterable<Buffer> {
    const size = this.size;
    const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, size));
    for (let at = 0; at < size;) {
      const { bytesRead } = await this.handle.read(buffer, 0, Math.min(buffer.length, size - at), at);
      if (bytesRead === 0) throw new Error(`the spooled upload ended at ${at} of ${size} bytes`);
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  async readAll(): Promise<Buffer> {
    const all = Buffer.allocUnsafe(this.size);
    for (let at = 0; at < all.length;) {
      const { bytesRead } = await this.handle.read(all, at, all.length - at, at);
      if (bytesRead === 0) throw new Error(`the spooled upload ended at ${at} of ${all.length} bytes`);
      at += bytesRead;
    }
    return all;
  }

  /** Frees the space; safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close().catch(() => undefined);
  }
}

export interface MultipartResult {
  fields: Record<string, string>;
  file: UploadedDocument;
}

/** Room for the form fields and part headers around the file, for the Content-Length check. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
const FIELD_NAMES = ['case_id', 'target_language', 'source_language'];
export const FILE_FIELD = 'file';

/**
 * Reads a multipart/form-data document request: exactly one file part named `file`, spooled to a
 * temporary file as it streams in (the caller closes it: `file.file.close()`), plus the
 * form fields. The file limit is enforced while the body streams in: a Content-Length beyond it
 * is refused before any of it is parsed, and a body that grows past it is refused the moment it
 * does, its chunks dropped, the rest of the request read and thrown away so the answer can be
 * sent on a healthy connection.
 */
export function readMultipart(req: Request, maxFileBytes: number): Promise<MultipartResult> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
    req.resume();
    return Promise.reject(fileTooLarge(maxFileBytes));
  }
  return new Promise<MultipartResult>((resolve, reject) => {
    let parser: Busboy;
    try {
      // fileSize + 1: busboy reports reaching the limit, and a file of exactly the limit is allowed.
      parser = busboy({
        headers: req.headers,
        limits: { fileSize: maxFileBytes + 1, files: 1, fields: 10, fieldSize: 1024, fieldNameSize: 100, parts: 12, headerPairs: 20 },
      });
    } catch (err) {
      req.resume();
      return reject(new DomainError('invalid_request', `The multipart body cannot be read: ${(err as Error).message}.`));
    }
    const fields: Record<string, string> = {};
    let file: UploadedDocument | null = null;
    let spool: SpooledFile | null = null;
    let pendingFile: Promise<void> | null = null;
    let settled = false;

    /** Refuses the request (`err`: a DomainError for the client's mistakes; any other error, e.g. the disk's, answers 500). */
    const stop = (err: Error) => {
      if (settled) return;
      settled = true;
      void spool?.close();
      req.unpipe(parser);
      parser.removeAllListeners();
      parser.on('error', () => undefined);
      req.resume(); // drain and discard the rest
      reject(err);
    };

    parser.on('file', (name, stream, info) => {
      // Every stream busboy hands out emits 'error' when the body ends inside its part: without a
      // listener that error would end the process (one truncated request must not).
      const cutShort = () =>
        stop(new DomainError('invalid_request', 'The multipart body ended inside a part; send the whole body, closed by its final boundary.'));
      if (name !== FILE_FIELD) {
        stream.on('error', cutShort);
        stream.resume();
        return stop(validationFailed(name, `is not a known field; send the document as the file part "${FILE_FIELD}"`));
      }
      const probe = new DocumentFileProbe();
      let size = 0;
      // The spool file is opened first (the stream paused until it is), then the chunks are written
      // in order, one at a time, the stream paused meanwhile (busboy then stops reading the
      // request): never more than a chunk of the file in memory. `written` never rejects.
      stream.pause();
      let written: Promise<void> = SpooledFile.create().then(
        (created) => {
          if (settled) return void created.close();
          spool = created;
          stream.resume();
        },
        (err: Error) => stop(err),
      );
      pendingFile = new Promise<void>((done) => {
        stream.on('error', () => {
          cutShort();
          done();
        });
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          const at = size;
          size += chunk.length;
          if (size > maxFileBytes) return stop(fileTooLarge(maxFileBytes));
          probe.update(chunk);
          stream.pause();
          written = written
            .then(() => spool!.write(chunk, at))
            .then(
              () => void (settled || stream.resume()),
              (err: Error) => stop(err),
            );
        });
        stream.on('limit', () => stop(fileTooLarge(maxFileBytes)));
        stream.on('end', () => {
          void written.then(() => {
            if (!settled && spool) {
              const facts = probe.finish();
              spool.finish(facts);
              file = { file: spool, name: info.filename ?? null, declaredType: info.mimeType || null, sha256: facts.sha256 };
            }
            done();
          });
        });
      });
    });
    parser.on('field', (name, value, info) => {
      if (name === FILE_FIELD) return stop(validationFailed(FILE_FIELD, 'must be a file part (with a filename), not a plain field'));
      if (!FIELD_NAMES.includes(name)) return stop(validationFailed(info.nameTruncated ? `${name}…` : name, 'is not a known field'));
      if (info.valueTruncated) return stop(validationFailed(name, 'is too long'));
      if (name in fields) return stop(validationFailed(name, 'must be sent once'));
      fields[name] = value;
    });
    parser.on('filesLimit', () => stop(validationFailed(FILE_FIELD, 'exactly one file must be sent')));
    parser.on('fieldsLimit', () => stop(validationFailed('body', 'has too many fields')));
    parser.on('partsLimit', () => stop(validationFailed('body', 'has too many parts')));
    parser.on('error', (err: Error) => stop(new DomainError('invalid_request', `The multipart body cannot be read: ${err.message}.`)));
    parser.on('close', async () => {
      await pendingFile;
      if (settled) return;
      if (!file) return stop(validationFailed(FILE_FIELD, 'exactly one file must be sent'));
      settled = true;
      resolve({ fields, file });
    });
    const aborted = () => stop(new DomainError('invalid_request', 'The request was aborted.'));
    req.on('aborted', aborted);
    req.on('error', aborted);
    req.pipe(parser);
  });
}
